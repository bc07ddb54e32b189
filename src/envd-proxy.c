/*
 * envd-proxy.c: the sandbox's end of holt's proxy (--net policy, DESIGN
 * 13). envd listens on 127.0.0.1:PORT inside the sandbox, where
 * HTTP_PROXY and HTTPS_PROXY point, and hands every connection it accepts
 * to holt-proxy on the host as a descriptor over a socket pair holt gave
 * it (--proxy-fd), then forgets it: the bytes never pass through envd.
 * Without a proxy to hand to, the client gets a clear 503 at once.
 */
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "envd.h"

int
envd_proxy_listen(int port)
{
	struct sockaddr_in	 sin;
	int			 s, one = 1;

	if ((s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) == -1)
		return -1;
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s, (struct sockaddr *)&sin, sizeof sin) != 0 ||
	    listen(s, 512) != 0) {
		close(s);
		return -1;
	}
	return s;
}

static void
proxy_handoff(int handoff, int fd)
{
	struct msghdr	 mh;
	struct iovec	 iov;
	struct cmsghdr	*cm;
	union {
		char		buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr	align;
	} u;
	char		 byte = 'c';
	static const char gone[] = "HTTP/1.1 503 Service Unavailable\r\n"
	    "Connection: close\r\nContent-Length: 71\r\n\r\n"
	    "holt: the sandbox's proxy is not running (holt sandbox stop, "
	    "then start)\n";

	memset(&mh, 0, sizeof mh);
	iov.iov_base = &byte;
	iov.iov_len = 1;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = u.buf;
	mh.msg_controllen = sizeof u.buf;
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof fd);
	memcpy(CMSG_DATA(cm), &fd, sizeof fd);
	if (handoff == -1 || sendmsg(handoff, &mh, MSG_NOSIGNAL |
	    MSG_DONTWAIT) != 1) {
		if (write(fd, gone, sizeof gone - 1) < 0)
			log_debug("proxy client: %s", strerror(errno));
	}
	close(fd);
}

/* Accept what is waiting (a bounded batch) and hand each on. */
void
envd_proxy_accept(int listener, int handoff)
{
	int	 fd, i;

	for (i = 0; i < 64; i++) {
		fd = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
		if (fd == -1)
			return;
		proxy_handoff(handoff, fd);
	}
}
