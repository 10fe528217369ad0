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
