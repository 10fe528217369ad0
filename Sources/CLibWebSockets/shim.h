#ifndef LANPUSH_CLIBWEBSOCKETS_SHIM_H
#define LANPUSH_CLIBWEBSOCKETS_SHIM_H

#include <libwebsockets.h>

/* libuv: the event loop lws runs on (its libuv plugin, with a loop the adapter owns) — epoll, not poll(). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>
/* libev: lws's libev plugin on a loop the adapter owns (EventLoop.swift). No libev 3 names (ev_loop as a function). */
#define EV_COMPAT3 0
#include <ev.h>

/*
 * Macros Swift cannot import (they are computed expressions), exposed as
 * static inline functions. Only LanpushLWS sees this module.
 */

/* Headroom lws needs in front of every buffer handed to lws_write(). */
static inline size_t lanpush_lws_pre(void) { return LWS_PRE; }

static inline uint64_t lanpush_opt_explicit_vhosts(void) { return LWS_SERVER_OPTION_EXPLICIT_VHOSTS; }
static inline uint64_t lanpush_opt_disable_ipv6(void) { return LWS_SERVER_OPTION_DISABLE_IPV6; }
static inline uint64_t lanpush_opt_validate_utf8(void) { return LWS_SERVER_OPTION_VALIDATE_UTF8; }
static inline uint64_t lanpush_opt_disable_os_ca_certs(void) { return LWS_SERVER_OPTION_DISABLE_OS_CA_CERTS; }
static inline uint64_t lanpush_opt_do_ssl_global_init(void) { return LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT; }
static inline uint64_t lanpush_opt_libuv(void) { return LWS_SERVER_OPTION_LIBUV; }
static inline uint64_t lanpush_opt_libev(void) { return LWS_SERVER_OPTION_LIBEV; }
/* TLS and plain on one port: lws tells a TLS ClientHello from a plain request by its first bytes. */
static inline uint64_t lanpush_opt_allow_non_ssl_on_ssl_port(void) { return LWS_SERVER_OPTION_ALLOW_NON_SSL_ON_SSL_PORT; }
/* ...and serve a plain request found there as plain HTTP (without it lws only hangs up or redirects). */
static inline uint64_t lanpush_opt_allow_http_on_https_listener(void) { return LWS_SERVER_OPTION_ALLOW_HTTP_ON_HTTPS_LISTENER; }

static inline void *lanpush_uv_loop_new(void)
{
	uv_loop_t *loop = malloc(sizeof(*loop));
	if (loop && uv_loop_init(loop)) {
		free(loop);
		loop = NULL;
	}
	return loop;
}

/* One turn: block for at least one event, handle what is ready. */
static inline void lanpush_uv_run_once(void *loop) { uv_run((uv_loop_t *)loop, UV_RUN_ONCE); }

/* After lws_context_destroy: lws closes its handles asynchronously and frees the rest of the context from
 * their close callbacks, so run the loop until nothing is left, then free it (a loop that still cannot close
 * is left allocated rather than freed under a handle). */
static inline void lanpush_uv_loop_finish(void *loop)
{
	uv_run((uv_loop_t *)loop, UV_RUN_DEFAULT);
	if (uv_loop_close((uv_loop_t *)loop) == 0)
		free(loop);
}

/* lws's cancel pipe: the one poll handle on the loop whose descriptor is an eventfd (lws 4.1 on Linux) or a
 * FIFO (where it has no eventfd). lws's other poll handles are sockets; its timers, idle and signal handles have
 * no descriptor, and libuv's own wake-up eventfd is not a poll handle. -1 when there is none. */
static inline int lanpush_fd_is_wake_pipe(int fd)
{
	struct stat st;
	char path[64], target[64];
	ssize_t n;

	if (fstat(fd, &st) != 0)
		return 0;
	if (S_ISFIFO(st.st_mode))
		return 1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return 0;
	target[n] = '\0';
	return strcmp(target, "anon_inode:[eventfd]") == 0;
}

static inline void lanpush_uv_find_wake_pipe(uv_handle_t *handle, void *arg)
{
	int *found = arg;
	uv_os_fd_t fd;

	if (*found >= 0 || uv_handle_get_type(handle) != UV_POLL || uv_is_closing(handle))
		return;
	if (uv_fileno(handle, &fd) == 0 && lanpush_fd_is_wake_pipe(fd))
		*found = fd;
}

static inline int lanpush_uv_event_pipe_fd(void *loop)
{
	int found = -1;
	uv_walk((uv_loop_t *)loop, lanpush_uv_find_wake_pipe, &found);
	return found;
}

/* libev: a loop on epoll (never select/poll: the point is not scanning every connection per turn). */
static inline void *lanpush_ev_loop_new(void)
{
	return ev_loop_new(EVBACKEND_EPOLL | EVFLAG_NOENV);
}

/* One turn: block for at least one event, handle what is ready. */
static inline void lanpush_ev_run_once(void *loop) { ev_run((struct ev_loop *)loop, EVRUN_ONCE); }

/* After lws_context_destroy: lws stopped its watchers synchronously; nothing of lws's is left on the loop. */
static inline void lanpush_ev_loop_free(void *loop) { ev_loop_destroy((struct ev_loop *)loop); }

/* A timer of the adapter's own on a libev loop: `fire(owner)` when it expires. `w` must stay first. */
typedef struct lanpush_ev_timer {
	ev_timer w;
	void (*fire)(void *owner);
	void *owner;
} lanpush_ev_timer_t;

static void lanpush_ev_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	lanpush_ev_timer_t *t = (lanpush_ev_timer_t *)w;
	(void)loop;
	(void)revents;
	t->fire(t->owner);
}

static inline lanpush_ev_timer_t *lanpush_ev_timer_new(void (*fire)(void *owner), void *owner)
{
	lanpush_ev_timer_t *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	ev_timer_init(&t->w, lanpush_ev_timer_cb, 0., 0.);
	t->fire = fire;
	t->owner = owner;
	return t;
}

/* (Re)arms: stopped first, since libev ignores a new time set on a running timer. */
static inline void lanpush_ev_timer_arm(void *loop, lanpush_ev_timer_t *t, double after, double repeat)
{
	ev_timer_stop((struct ev_loop *)loop, &t->w);
	ev_now_update((struct ev_loop *)loop);
	ev_timer_set(&t->w, after, repeat);
	ev_timer_start((struct ev_loop *)loop, &t->w);
}

static inline void lanpush_ev_timer_stop(void *loop, lanpush_ev_timer_t *t)
{
	ev_timer_stop((struct ev_loop *)loop, &t->w);
}

static inline void lanpush_ev_timer_free(void *loop, lanpush_ev_timer_t *t)
{
	if (!t)
		return;
	if (loop)
		ev_timer_stop((struct ev_loop *)loop, &t->w);
	free(t);
}

static void lanpush_ev_cancel_service(void *context) { lws_cancel_service((struct lws_context *)context); }

/* Every `seconds`: lws_cancel_service, which lws handles as I/O and then runs its due timers (EventLoop.swift). */
static inline lanpush_ev_timer_t *lanpush_ev_nudge_new(void *loop, void *context, double seconds)
{
	lanpush_ev_timer_t *t = lanpush_ev_timer_new(lanpush_ev_cancel_service, context);
	if (t)
		lanpush_ev_timer_arm(loop, t, seconds, seconds);
	return t;
}

/* Services a socket as writable, as a poll reporting POLLOUT would (see HTTPTransaction.swift). */
static inline int lanpush_service_writable(struct lws_context *context, struct lws *wsi)
{
	struct lws_pollfd pfd;

	pfd.fd = lws_get_socket_fd(wsi);
	pfd.events = LWS_POLLOUT;
	pfd.revents = LWS_POLLOUT;
	return lws_service_fd(context, &pfd);
}

/*
 * A timer: lws hands the sul pointer back to the callback; the owner pointer
 * (an unretained Swift object) sits right behind it. `sul` must stay first.
 */
typedef struct lanpush_lws_timer {
	lws_sorted_usec_list_t sul;
	void *owner;
} lanpush_lws_timer_t;

static inline void *lanpush_lws_timer_owner(lws_sorted_usec_list_t *sul)
{
	return ((lanpush_lws_timer_t *)sul)->owner;
}

static inline lws_sorted_usec_list_t *lanpush_lws_timer_sul(lanpush_lws_timer_t *t)
{
	return &t->sul;
}

#endif
