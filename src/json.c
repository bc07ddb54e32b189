/*
 * json.c: cJSON helpers and time stamps.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "holt.h"

const char *
json_str(const cJSON *obj, const char *key)
{
	const cJSON	*v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

double
json_num(const cJSON *obj, const char *key, double dflt)
{
	const cJSON	*v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

int
json_bool(const cJSON *obj, const char *key, int dflt)
{
	const cJSON	*v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (cJSON_IsBool(v))
		return cJSON_IsTrue(v);
	return dflt;
}

char *
json_print(const cJSON *obj)
{
	char	*s, *out;

	if ((s = cJSON_PrintUnformatted(obj)) == NULL)
		fatalx("out of memory (json)");
	out = xstrdup(s);
	cJSON_free(s);
	return out;
}

cJSON *
json_load_file(const char *path, char **cause)
{
	char		*data;
	size_t		 len;
	cJSON		*obj;
	const char	*end;

	if ((data = file_read(path, &len, 64U * 1024 * 1024)) == NULL) {
		*cause = xprintf("%s: %s", path, strerror(errno));
		return NULL;
	}
	obj = cJSON_ParseWithLengthOpts(data, len, &end, 0);
	if (obj == NULL || !cJSON_IsObject(obj)) {
		*cause = xprintf("%s: corrupt file (not a JSON object%s)", path,
		    len == 0 ? ", empty" : "");
		cJSON_Delete(obj);
		free(data);
		return NULL;
	}
	free(data);
	return obj;
}

int
json_save_file(const char *path, const cJSON *obj, char **cause)
{
	char	*s;
	int	 rc;

	if ((s = cJSON_Print(obj)) == NULL)
		fatalx("out of memory (json)");
	rc = file_write_atomic(path, s, strlen(s), 0600);
	if (rc != 0)
		*cause = xprintf("%s: %s", path, strerror(errno));
	cJSON_free(s);
	return rc;
}

char *
json_time_now(void)
{
	struct timespec	 ts;
	struct tm	 tm;
	char		 when[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
	return xprintf("%s.%03ldZ", when, ts.tv_nsec / 1000000);
}

uint64_t
json_now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t
mono_us(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

uint64_t
mono_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}
