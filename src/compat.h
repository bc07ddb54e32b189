/*
 * Functions holt does not use, as git's banned.h: each has a bounded or
 * allocating replacement (buf_*, xasprintf, xstrlcpy).
 */
#ifndef HOLT_COMPAT_H
#define HOLT_COMPAT_H

#define BANNED(f) sorry_##f##_is_banned_in_holt
#undef strcpy
#define strcpy(x, y) BANNED(strcpy)
#undef strcat
#define strcat(x, y) BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) BANNED(strncpy)
#undef sprintf
#define sprintf(...) BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) BANNED(vsprintf)
#undef strtok
#define strtok(x, y) BANNED(strtok)
#undef gets
#define gets(x) BANNED(gets)

#endif
