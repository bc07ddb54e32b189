/*
 * client.c: connecting to the server, starting it on demand (like tmux:
 * the first client forks the server; a lock file beside the socket makes
 * two racing clients start exactly one).
 */
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client.h"

char *
client_socket_path(void)
{
	if (cmd_socket_path != NULL)
		return xstrdup(cmd_socket_path);
	return paths_join(paths_run_dir(), cmd_socket_name != NULL ?
	    cmd_socket_name : "default");
}

static int
client_try(const char *path)
{
	struct sockaddr_un	 sun;
	int			 fd;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sun.sun_path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	xstrlcpy(sun.sun_path, path, sizeof sun.sun_path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof sun) == -1) {
		int saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

/* Fork the server: detached, in its own session, stdio on /dev/null. */
static int
client_start_server(char **cause)
{
	pid_t	 pid;
	int	 status, null;
	char	 self[4096];
	ssize_t	 n;

	if ((n = readlink("/proc/self/exe", self, sizeof self - 1)) <= 0) {
		*cause = xprintf("cannot find the holt binary: %s",
		    strerror(errno));
		return -1;
	}
	self[n] = '\0';
	if ((pid = fork()) == -1) {
		*cause = xprintf("fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		setsid();
		if (fork() != 0)
			_exit(0);
		if ((null = open("/dev/null", O_RDWR)) != -1) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
			if (null > 2)
				close(null);
		}
		if (cmd_socket_path != NULL)
			execl(self, "holt", "-S", cmd_socket_path, "server", "-f",
			    (char *)NULL);
		else if (cmd_socket_name != NULL)
			execl(self, "holt", "-L", cmd_socket_name, "server", "-f",
			    (char *)NULL);
		else
			execl(self, "holt", "server", "-f", (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	return 0;
}

static cJSON *
client_hello_new(void)
{
	cJSON	*req = cJSON_CreateObject();

	cJSON_AddStringToObject(req, "type", "hello");
	cJSON_AddNumberToObject(req, "version", HOLT_PROTOCOL_VERSION);
	cJSON_AddStringToObject(req, "client", "cli");
	return req;
}

static int
client_hello(int fd, char **cause)
{
	cJSON	*rep;

	if ((rep = client_call(fd, client_hello_new(), cause)) == NULL)
		return -1;
	cJSON_Delete(rep);
	return 0;
}

static int	client_connect_once(int, char **);
static int	client_open(int, char **);
static cJSON	*client_reply(int, char **);

/* Worth another try: a server that is dying accepted and dropped us. */
static int
client_retry(const char *cause)
{
	return strstr(cause, "closed the connection") != NULL ||
	    strstr(cause, "reset by peer") != NULL ||
	    strstr(cause, "Broken pipe") != NULL;
}

/*
 * A server that is dying (killed, or exiting) may still accept a
 * connection and then drop it: try again, starting a new one if need be.
 */
int
client_connect(int start, char **cause)
{
	struct timespec	 ts = { 0, 50 * 1000 * 1000 };
	int		 fd, i;

	for (i = 0; i < 3; i++) {
		if ((fd = client_connect_once(start, cause)) != -1)
			return fd;
		if (!client_retry(*cause))
			return -1;
		free(*cause);
		*cause = NULL;
		nanosleep(&ts, NULL);
	}
	return client_connect_once(start, cause);
}

static int
client_connect_once(int start, char **cause)
{
	int	 fd;

	if ((fd = client_open(start, cause)) == -1)
		return -1;
	if (client_hello(fd, cause) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Connected (the server started if need be and start is set), no hello. */
static int
client_open(int start, char **cause)
{
	char		*path, *lock;
	int		 fd, lfd = -1, i;
	struct timespec	 ts = { 0, 20 * 1000 * 1000 };

	path = client_socket_path();
	if ((fd = client_try(path)) != -1)
		goto done;
	if (!start || (errno != ENOENT && errno != ECONNREFUSED)) {
		*cause = xprintf("no server running on %s", path);
		free(path);
		return -1;
	}
	lock = xprintf("%s.lock", path);
	if ((lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1 ||
	    flock(lfd, LOCK_EX) == -1) {
		*cause = xprintf("%s: %s", lock, strerror(errno));
		free(lock);
		free(path);
		if (lfd != -1)
			close(lfd);
		return -1;
	}
	free(lock);
	/* Someone may have started it while we waited for the lock. */
	if ((fd = client_try(path)) == -1) {
		if (client_start_server(cause) != 0) {
			close(lfd);
			free(path);
			return -1;
		}
		for (i = 0; i < 500; i++) {	/* up to ~10 s */
			if ((fd = client_try(path)) != -1)
				break;
			nanosleep(&ts, NULL);
		}
	}
	close(lfd);
	if (fd == -1) {
		*cause = xprintf("the server did not start (socket %s; see "
		    "its log beside it)", path);
		free(path);
		return -1;
	}
done:
	free(path);
	return fd;
}

cJSON *
client_call(int fd, cJSON *req, char **cause)
{
	if (frame_write_fd(fd, req) != 0) {
		*cause = xprintf("server: %s", strerror(errno));
		cJSON_Delete(req);
		return NULL;
	}
	cJSON_Delete(req);
	return client_reply(fd, cause);
}

/* The next reply on fd, past events; an "error" reply sets *cause. */
static cJSON *
client_reply(int fd, char **cause)
{
	cJSON		*rep;
	const char	*type;
	int		 r;

	for (;;) {
		r = frame_read_fd(fd, &rep, cause);
		if (r == 0) {
			*cause = xstrdup("the server closed the connection");
			return NULL;
		}
		if (r < 0)
			return NULL;
		type = json_str(rep, "type");
		if (type != NULL && (strcmp(type, "event") == 0 ||
		    strcmp(type, "state") == 0)) {
			cJSON_Delete(rep);
			continue;
		}
		if (type != NULL && strcmp(type, "error") == 0) {
			*cause = xstrdup(json_str(rep, "message") != NULL ?
			    json_str(rep, "message") : "error");
			cJSON_Delete(rep);
			return NULL;
		}
		return rep;
	}
}

/*
 * One request on a connection of its own: hello and the request go out in
 * one write, and the replies are read in turn, which saves the server a
 * round (a loaded server answers the second frame in the same pass).
 */
static cJSON *
client_hello_call(int fd, const cJSON *req, char **cause)
{
	cJSON	*hello, *rep;
	int	 r;

	hello = client_hello_new();
	r = frame_write2_fd(fd, hello, req);
	cJSON_Delete(hello);
	if (r != 0) {
		*cause = errno == EMSGSIZE ? xprintf("request too large (over "
		    "%u bytes)", FRAME_MAX) : xprintf("server: %s",
		    strerror(errno));
		return NULL;
	}
	if ((rep = client_reply(fd, cause)) == NULL)
		return NULL;
	cJSON_Delete(rep);
	return client_reply(fd, cause);
}

cJSON *
client_request(cJSON *req, int start, char **cause)
{
	struct timespec	 ts = { 0, 50 * 1000 * 1000 };
	cJSON		*rep = NULL;
	int		 fd, i;

	for (i = 0; i < 4; i++) {
		if (i > 0) {
			free(*cause);
			*cause = NULL;
			nanosleep(&ts, NULL);
		}
		if ((fd = client_open(start, cause)) == -1)
			break;
		rep = client_hello_call(fd, req, cause);
		close(fd);
		if (rep != NULL || !client_retry(*cause))
			break;
	}
	cJSON_Delete(req);
	return rep;
}
