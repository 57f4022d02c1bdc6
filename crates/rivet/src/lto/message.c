/* The plugin API's `message` callback is variadic (`int level, const char *format, ...`), which
   stable Rust cannot define: this formats the message and hands the text to rivet. */
#include <stdarg.h>
#include <stdio.h>

void rivet_lto_message_text(int level, const char *text);

int rivet_lto_message(int level, const char *format, ...) {
  char buf[4096];
  va_list ap;
  va_start(ap, format);
  vsnprintf(buf, sizeof buf, format, ap);
  va_end(ap);
  rivet_lto_message_text(level, buf);
  return 0; /* LDPS_OK */
}
