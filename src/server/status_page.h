/* status_page.h: the page GET / serves (status_page.html, compiled in by
 * cmake/embed.cmake): one self-contained HTML file that reads /v1/info, /v1/callers and
 * /metrics. */
#ifndef IDGEN_SERVER_STATUS_PAGE_H
#define IDGEN_SERVER_STATUS_PAGE_H

#include <stddef.h>

extern const unsigned char idgen__status_page[];
extern const size_t idgen__status_page_len;

#endif
