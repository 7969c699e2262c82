/*
 * Shapes: the layout of objects already validated, to read the next ones
 * laid out alike by comparison rather than by parsing.
 *
 * A trace writes each kind of event with the same members, in the same
 * order, with the same spacing (a Python frame is always {"ph": "X",
 * "cat": "python_function", "name": ..., "pid": ..., ..., "args": {...}});
 * only the values change.  A shape is one such object with its values
 * taken out: the literal text around them and the kind of each value
 * (string, number, true, false, null).  An object whose literal text is
 * the same byte for byte and whose every value is valid JSON of the same
 * kind is valid JSON of the same structure, so it needs no parsing: its
 * selected members (json.h, struct json_keys) are where the shape says.
 *
 * json_select_shaped is json_select_object with a memory of shapes (a
 * tree of them, up to 16384 values; beyond that it starts again): it walks
 * them along the object, and otherwise selects the strict way and learns
 * the object's shape.  Strings with escapes or
 * control characters never fit a shape; they and whatever else the strict
 * selection leaves alone take json_select_object's path.  The results are
 * the same in every case (the fuzz harnesses compare them).
 */
#ifndef JSHAPE_H
#define JSHAPE_H

#include <stddef.h>

#include "json.h"

struct json_shape;

struct json_shapes {
	const struct json_keys *keys;
	struct json_shape *tree;	/* the shapes learnt, sharing their beginnings */
	unsigned gap, misses;	/* learn once per `gap` misses: more seldom while none fits */
	unsigned long long fits_since_learn;
	json_doc full;		/* scratch: an object tokenized in full to learn its shape */
	unsigned long long fitted, learned;	/* counts, for tests */
};

/* An empty cache for selections of k (which must outlive it). */
void json_shapes_init(struct json_shapes *c, const struct json_keys *k);
void json_shapes_free(struct json_shapes *c);

/*
 * json_select_object(d, js, len, c->keys, idx) (json.h), through the
 * cache.  Returns the object's length, or 0 exactly when json_select_object
 * does; d and idx are then as it leaves them.
 */
size_t json_select_shaped(struct json_shapes *c, json_doc *d, const char *js, size_t len,
    int *idx);

#endif
