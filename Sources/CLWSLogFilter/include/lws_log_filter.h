#ifndef LANPUSH_LWS_LOG_FILTER_H
#define LANPUSH_LWS_LOG_FILTER_H

/// lws's `lws_set_log_level`, and the same mask for the filter in front of lws's own log call (lws_log_filter.c).
/// Every level change in this process goes through here, or the filter would drop lines lws was told to print.
void lanpush_lws_set_log_level(int level, void (*emit)(int level, const char *line));

/// One line through lws's log call as lws's own code makes it (`lwsl_err` and friends are macros Swift cannot see).
void lanpush_lws_log_line(int filter, const char *line);

/// One line through the same call with arguments of every kind lws's own lines pass — integers, strings, a double,
/// more than the argument registers hold — for the check that the filter hands them on untouched:
/// `log filter sample: -1 two 3 4 5 6 7.5 eight`.
void lanpush_lws_log_sample(int filter);

#endif
