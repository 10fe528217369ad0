#ifndef LANPUSH_CAVAHI_SHIM_H
#define LANPUSH_CAVAHI_SHIM_H

/*
 * The avahi-client surface LanpushAvahi uses, plus the few things Swift cannot import directly:
 *  - constants from anonymous enums / macros, typed as Avahi's own typedefs;
 *  - thin wrappers over the AvahiPoll function-pointer table (timeouts);
 *  - a tiny pthread mutex + condition pair, so the Swift adapter needs neither Glibc nor Foundation
 *    (ThreadSanitizer reports false races on Synchronization.Mutex, not on a pthread mutex).
 * Variadic Avahi calls (avahi_entry_group_add_service, avahi_string_list_new, ...) are unavailable in
 * Swift: use the *_strlst variants and avahi_string_list_add_pair.
 */

#include <avahi-client/client.h>
#include <avahi-client/lookup.h>
#include <avahi-client/publish.h>
#include <avahi-common/address.h>
#include <avahi-common/alternative.h>
#include <avahi-common/defs.h>
#include <avahi-common/domain.h>
#include <avahi-common/error.h>
#include <avahi-common/malloc.h>
#include <avahi-common/strlst.h>
#include <avahi-common/thread-watch.h>
#include <avahi-common/timeval.h>
#include <avahi-common/watch.h>

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* ---- constants (anonymous enums import as Int, macros with casts do not import at all) ---- */

static const AvahiIfIndex LP_AVAHI_IF_UNSPEC = AVAHI_IF_UNSPEC;
static const AvahiProtocol LP_AVAHI_PROTO_UNSPEC = AVAHI_PROTO_UNSPEC;
static const AvahiProtocol LP_AVAHI_PROTO_INET = AVAHI_PROTO_INET;
static const AvahiProtocol LP_AVAHI_PROTO_INET6 = AVAHI_PROTO_INET6;
static const int LP_AVAHI_ADDRESS_STR_MAX = AVAHI_ADDRESS_STR_MAX;
static const int LP_AVAHI_DOMAIN_NAME_MAX = AVAHI_DOMAIN_NAME_MAX;
static const int LP_AVAHI_LABEL_MAX = AVAHI_LABEL_MAX;
static const int LP_AVAHI_OK = AVAHI_OK;
static const int LP_AVAHI_ERR_COLLISION = AVAHI_ERR_COLLISION;
static const int LP_AVAHI_ERR_DISCONNECTED = AVAHI_ERR_DISCONNECTED;
static const int LP_AVAHI_ERR_NO_DAEMON = AVAHI_ERR_NO_DAEMON;
static const int LP_AVAHI_ERR_DBUS_ERROR = AVAHI_ERR_DBUS_ERROR;

/* The D-Bus system bus address libavahi-client connects to (it honours $DBUS_SYSTEM_BUS_ADDRESS). */
static inline const char *lp_dbus_system_bus_address(void) {
    const char *address = getenv("DBUS_SYSTEM_BUS_ADDRESS");
    return (address && *address) ? address : "unix:path=/var/run/dbus/system_bus_socket";
}

/* ---- AvahiPoll timeouts (the API is a table of function pointers) ---- */

/* A one-shot timeout `ms` milliseconds from now. Call with the poll lock held (or from a callback). */
static inline AvahiTimeout *lp_avahi_timeout_new_ms(const AvahiPoll *api, unsigned ms,
                                                    AvahiTimeoutCallback callback, void *userdata) {
    struct timeval tv;
    avahi_elapse_time(&tv, ms, 0);
    return api->timeout_new(api, &tv, callback, userdata);
}

/* Re-arm a timeout `ms` milliseconds from now. */
static inline void lp_avahi_timeout_update_ms(const AvahiPoll *api, AvahiTimeout *t, unsigned ms) {
    struct timeval tv;
    avahi_elapse_time(&tv, ms, 0);
    api->timeout_update(t, &tv);
}

static inline void lp_avahi_timeout_free(const AvahiPoll *api, AvahiTimeout *t) {
    api->timeout_free(t);
}

/* ---- a mutex + condition variable with a monotonic deadline ---- */

typedef struct lp_sync {
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    struct timespec deadline;
} lp_sync;

static inline lp_sync *lp_sync_new(void) {
    lp_sync *s = (lp_sync *)calloc(1, sizeof(lp_sync));
    if (!s) return NULL;
    pthread_mutex_init(&s->mutex, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cond, &attr);
    pthread_condattr_destroy(&attr);
    return s;
}

static inline void lp_sync_free(lp_sync *s) {
    if (!s) return;
    pthread_cond_destroy(&s->cond);
    pthread_mutex_destroy(&s->mutex);
    free(s);
}

static inline void lp_sync_lock(lp_sync *s) { pthread_mutex_lock(&s->mutex); }
static inline void lp_sync_unlock(lp_sync *s) { pthread_mutex_unlock(&s->mutex); }
static inline void lp_sync_broadcast(lp_sync *s) { pthread_cond_broadcast(&s->cond); }

/* Sets the deadline `seconds` from now (monotonic clock). */
static inline void lp_sync_set_deadline(lp_sync *s, double seconds) {
    if (seconds < 0) seconds = 0;
    clock_gettime(CLOCK_MONOTONIC, &s->deadline);
    long long whole = (long long)seconds;
    long long nsec = s->deadline.tv_nsec + (long long)((seconds - (double)whole) * 1e9);
    s->deadline.tv_sec += (time_t)whole + (time_t)(nsec / 1000000000LL);
    s->deadline.tv_nsec = (long)(nsec % 1000000000LL);
}

/* Waits (mutex held) until signalled or the deadline passes. Returns 1 once the deadline has passed. */
static inline int lp_sync_wait_deadline(lp_sync *s) {
    return pthread_cond_timedwait(&s->cond, &s->mutex, &s->deadline) == ETIMEDOUT ? 1 : 0;
}

#endif
