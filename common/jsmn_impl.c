/* The single translation unit that compiles jsmn's implementation. */
#include <jsmn.h>
