# embed.cmake: writes a C file holding the bytes of a file, for the binary to serve
# (the status page). cmake -DIN=file -DOUT=file.c -DNAME=symbol -P embed.cmake defines
# `const unsigned char NAME[]` (NUL-terminated) and `const size_t NAME_len`.
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" digits)
math(EXPR len "${digits} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n"
  bytes "${bytes}")
get_filename_component(name "${IN}" NAME)
file(WRITE "${OUT}" "/* Generated from ${name} by cmake/embed.cmake at build time. */
#include <stddef.h>

extern const unsigned char ${NAME}[];
extern const size_t ${NAME}_len;
const unsigned char ${NAME}[] = {
${bytes}0};
const size_t ${NAME}_len = ${len};
")
