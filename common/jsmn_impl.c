/*
 * The single translation unit that compiles jsmn's implementation, with the
 * same token layout option as common/json.h.
 */
#define JSMN_PARENT_LINKS
#include <jsmn.h>
