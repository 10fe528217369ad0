// libqrencode (Debian's libqrencode-dev): the CLI draws pairing URLs as QR codes in the terminal.
#include <qrencode.h>
