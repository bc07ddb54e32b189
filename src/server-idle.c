/*
 * server-idle.c: pause like the cloud (DESIGN 13). Every few seconds the
 * server looks at the running sandboxes: one whose idle_pause has passed
 * since it was last used, in which no command runs (sandbox_busy), and
 * which no session of ours is using (a client attached, a run going on)
 * is paused, not stopped; any use resumes it (exec and the other sandbox
 * commands, attach, a connection to a forwarded port). A sandbox seen in
 * use is touched, so its idle time counts from the end of that use.
 *
 * The check costs a read of every sandbox's meta.json and, for those due,
 * a walk of /proc: it runs every half of the shortest idle_pause, between
 * 1 and 30 seconds.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "server.h"
#include "sandbox.h"

#define IDLE_CHECK_MIN_MS	1000
#define IDLE_CHECK_MAX_MS	30000

struct server_idle {
	struct event		*timer;
	server_idle_in_use	 in_use;
	void			*arg;
};

static uint64_t
now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
server_idle_check(evutil_socket_t fd, short what, void *arg)
{
	struct server_idle	*si = arg;
	struct sandbox		**list;
	size_t			  n, i;
	long long		  idle, next = IDLE_CHECK_MAX_MS * 2;
	uint64_t		  now = now_ms(), used;
	struct timeval		  tv;
	char			 *cause = NULL;

	(void)fd;
	(void)what;
	list = sandbox_list(&n);
	for (i = 0; i < n; i++) {
		if ((idle = sandbox_idle_pause(list[i])) <= 0 ||
		    sandbox_state(list[i]) != SANDBOX_RUNNING)
			continue;
		if (idle < next)
			next = idle;
		used = sandbox_last_used(list[i]);
		if (used + (uint64_t)idle > now)
			continue;
		if (si->in_use(si->arg, sandbox_id(list[i])) ||
		    sandbox_busy(list[i])) {
			sandbox_touch(list[i]);
			continue;
		}
		if (sandbox_pause(list[i], &cause) != 0) {
			log_warnx("idle pause: %s", cause);
			free(cause);
			cause = NULL;
		} else
			log_info("sandbox %s: paused, idle for %lld s",
			    sandbox_id(list[i]), (long long)(now - used) / 1000);
	}
	sandbox_list_free(list, n);
	next /= 2;
	if (next < IDLE_CHECK_MIN_MS)
		next = IDLE_CHECK_MIN_MS;
	if (next > IDLE_CHECK_MAX_MS)
		next = IDLE_CHECK_MAX_MS;
	tv.tv_sec = next / 1000;
	tv.tv_usec = (next % 1000) * 1000;
	evtimer_add(si->timer, &tv);
}

struct server_idle *
server_idle_new(struct event_base *base, server_idle_in_use in_use,
    void *arg)
{
	struct server_idle	*si = xcalloc(1, sizeof *si);
	struct timeval		 tv = { 1, 0 };

	si->in_use = in_use;
	si->arg = arg;
	si->timer = evtimer_new(base, server_idle_check, si);
	evtimer_add(si->timer, &tv);
	return si;
}

void
server_idle_free(struct server_idle *si)
{
	if (si == NULL)
		return;
	event_free(si->timer);
	free(si);
}
