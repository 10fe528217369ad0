#ifndef CMDIICONS_H
#define CMDIICONS_H
#include <stddef.h>

/// The Material Design Icons set (`mdi.json.gz`: gzip-compressed JSON, see scripts/mdi-icons), linked into the binary.
const unsigned char *lanpush_mdi_icons_bytes(void);
size_t lanpush_mdi_icons_size(void);

#endif
