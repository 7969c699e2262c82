/* Serving-framework resolution (kernel-table.md Appendix B, capture-and-cli.md §5). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extract.h"
#include "json.h"
#include "rules.h"
#include "scan.h"
#include "text.h"
#include "xalloc.h"
#include "zio.h"

static const char *tokenspeed_keys[] = {
	"attn_tp_size", "dense_tp_size", "moe_tp_size", "enable_mla_l1_5_cache",
	"mla_chunk_multiplier", "comm_fusion_max_num_tokens", "enable_allreduce_fusion", NULL
};
static const char *sglang_keys[] = {
	"attention_backend", "sampling_backend", "disable_cuda_graph",
	"disable_piecewise_cuda_graph", "chunked_prefill_size", "schedule_policy", NULL
};

static int
has_key(const json_doc *d, const char **keys)
{
	int i, k, n = d->tok[0].size;
	sbuf t = SBUF_INIT, kn = SBUF_INIT;

	for (i = 1, k = 0; k < n; k++) {
		size_t j;
		json_str(d, i, &t, NULL);
		text_normalize(t.s ? t.s : "", t.len, &kn);
		text_lower(kn.s, kn.len);
		for (j = 0; keys[j]; j++)
			if (!strcmp(sb_str(&kn), keys[j])) {
				sb_free(&t);
				sb_free(&kn);
				return 1;
			}
		i = json_skip(d, i + 1);
	}
	sb_free(&t);
	sb_free(&kn);
	return 0;
}

const char *
server_args_hint(const char *jsontext)
{
	json_doc d = { 0 };
	sbuf low = SBUF_INIT;
	const char *hint = NULL;

	if (!jsontext || json_parse(&d, jsontext, strlen(jsontext)) < 0 ||
	    d.tok[0].type != JSMN_OBJECT || d.tok[0].size == 0)
		goto out;
	/* The reference serializes with sorted keys; substring tests do not
	 * depend on member order, so the minified text serves. */
	sb_adds(&low, jsontext);
	text_lower(low.s, low.len);
	if (strstr(low.s, "tokenspeed") || strstr(low.s, "token-speed")) {
		hint = "tokenspeed";
		goto out;
	}
	if (has_key(&d, tokenspeed_keys)) {
		hint = "tokenspeed";
		goto out;
	}
	if ((hint = framework_text_hint(jsontext, strlen(jsontext))) != NULL)
		goto out;
	if (has_key(&d, sglang_keys))
		hint = "sglang";
out:
	json_doc_free(&d);
	sb_free(&low);
	return hint;
}

struct hintctx {
	sbuf text;
	int n;
	const json_doc *d;	/* the event being read (owned by the scanner) */
};

static void
add_pystr(struct hintctx *h, int i)
{
	sbuf t = SBUF_INIT;

	if (i >= 0)
		json_pystr(h->d, i, &t, NULL);
	sb_add(&h->text, t.s ? t.s : "", t.len);
	sb_addc(&h->text, ' ');
	sb_free(&t);
}

static int
hint_event(void *ctx, const json_doc *d, unsigned long long off)
{
	struct hintctx *h = ctx;
	int args, k, n, i;

	(void)off;
	if (d->ntok == 0)
		return 1;
	h->d = d;
	add_pystr(h, json_get(h->d, 0, "name"));
	add_pystr(h, json_get(h->d, 0, "cat"));
	add_pystr(h, json_get(h->d, 0, "pid"));
	args = json_get(h->d, 0, "args");
	if (args >= 0 && h->d->tok[args].type == JSMN_OBJECT) {
		n = h->d->tok[args].size;
		for (k = 0, i = args + 1; k < n && k < 8; k++) {
			add_pystr(h, i);
			if (json_kind(h->d, i + 1) == JK_STR)
				add_pystr(h, i + 1);
			i = json_skip(h->d, i + 1);
		}
	}
	return ++h->n >= 256;
}

const char *
trace_content_hint(const char *path)
{
	struct hintctx h = { SBUF_INIT, 0, NULL };
	struct scan_stats st;
	char err[512];
	zio *z = zio_open(path);
	const char *hint = NULL;
	int r;

	if (!z)
		return NULL;
	r = scan_run(z, path, hint_event, &h, &st, err, sizeof err, NULL);
	zio_close(z);
	/* A load error means no hint, except that stopping early is not one. */
	if (r != SCAN_ERROR && h.text.len)
		hint = framework_text_hint(h.text.s, h.text.len);
	sb_free(&h.text);
	return hint;
}

const char *
resolve_framework(const char *explicit_fw, const char *fallback, const char *abspath,
    int is_dir, const char *server_args_json)
{
	const char *c = framework_canonical(explicit_fw ? explicit_fw : "auto");
	const char *h;
	sbuf own = SBUF_INIT;
	struct tlist rec = { 0 };
	size_t i, start;

	if (strcmp(c, "auto") != 0)
		return c;
	if ((h = server_args_hint(server_args_json)) != NULL)
		return h;
	if ((h = framework_text_hint(abspath, strlen(abspath))) != NULL)
		return h;
	if (load_server_args_for(abspath, &own) > 0) {
		h = server_args_hint(own.s);
		sb_free(&own);
		if (h)
			return h;
	}
	if (!is_dir) {
		if ((h = trace_content_hint(abspath)) != NULL)
			return h;
	} else {
		discover_files(abspath, 1, &rec);
		start = rec.n > 3 ? rec.n - 3 : 0;
		for (i = start; i < rec.n; i++)
			if ((h = trace_content_hint(rec.v[i].path)) != NULL)
				break;
		tlist_free(&rec);
		if (h)
			return h;
	}
	if (fallback && strcmp(framework_canonical(fallback), "auto") != 0)
		return framework_canonical(fallback);
	return "sglang";
}
