#ifndef LANPUSH_LWS_LOG_FILTER_H
#define LANPUSH_LWS_LOG_FILTER_H

/// lws's `lws_set_log_level`, and the same mask for the filter in front of lws's own log call (lws_log_filter.c).
/// Every level change in this process goes through here, or the filter would drop lines lws was told to print.
void lanpush_lws_set_log_level(int level, void (*emit)(int level, const char *line));

/// One line through lws's log call as lws's own code makes it (`lwsl_err` and friends are macros Swift cannot see).
void lanpush_lws_log_line(int filter, const char *line);

#endif
