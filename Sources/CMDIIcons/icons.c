// The icon set is 790 KB of gzip. SwiftPM's `.embedInCode` turns a resource into a Swift `[UInt8]` literal, which
// costs the Swift compiler about 20 s per 100 KB in a debug build (measured: 1 MB took over 20 minutes on the
// project's two cores). C23's `#embed` (clang 19 and later; Swift 6.3 ships clang 21) links the same bytes in well
// under a second, and clang lists the file in the dependency output, so editing it rebuilds this file.
#include "CMDIIcons.h"

#pragma clang diagnostic ignored "-Wc23-extensions"

static const unsigned char icons[] = {
#embed "mdi.json.gz"
};

const unsigned char *lanpush_mdi_icons_bytes(void) { return icons; }

size_t lanpush_mdi_icons_size(void) { return sizeof(icons); }
