/*
 * The probe records of a live capture (issue 19): what each request sent
 * to the server took and answered, kept while the capture runs and written
 * to --records FILE at its end as triage-records(5) "probe" lines.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "err.h"
#include "json.h"
#include "ofile.h"
#include "rec.h"
#include "xalloc.h"

static struct probe_rec *log_v;
static size_t log_n, log_cap;

void
probe_log(const struct probe_rec *r)
{
	xgrow(&log_v, &log_cap, log_n + 1, sizeof *log_v);
	log_v[log_n++] = *r;
}

/*
 * The answer's text is empty, and how many tokens it says it generated:
 * SGLang's /generate ({"text", "meta_info": {"completion_tokens"}}) or an
 * OpenAI answer ({"choices": [{"message": {"content"}} or {"text"}],
 * "usage": {"completion_tokens"}}).  A body that is not an object has no
 * text.
 */
void
probe_answer(const char *body, size_t len, struct probe_rec *r)
{
	json_doc d = { 0 };
	sbuf t = SBUF_INIT;
	int txt = -1, meta, ch, c0, msg, use, tok = -1;
	size_t i;

	r->empty = 1;
	r->has_tokens = 0;
	if (len == 0 || !json_valid(body, len) || json_parse(&d, body, len) != 0 ||
	    json_kind(&d, 0) != JK_OBJ)
		goto out;
	if ((txt = json_get(&d, 0, "text")) >= 0) {
		meta = json_get(&d, 0, "meta_info");
		if (json_kind(&d, meta) == JK_OBJ)
			tok = json_get(&d, meta, "completion_tokens");
	} else if (json_kind(&d, ch = json_get(&d, 0, "choices")) == JK_ARR &&
	    d.tok[ch].size > 0 && json_kind(&d, c0 = ch + 1) == JK_OBJ) {
		msg = json_get(&d, c0, "message");
		txt = json_kind(&d, msg) == JK_OBJ ? json_get(&d, msg, "content") :
		    json_get(&d, c0, "text");
		use = json_get(&d, 0, "usage");
		if (json_kind(&d, use) == JK_OBJ)
			tok = json_get(&d, use, "completion_tokens");
	}
	if (json_kind(&d, txt) == JK_STR) {
		json_str(&d, txt, &t, NULL);
		for (i = 0; i < t.len; i++)
			if (t.s[i] != ' ' && t.s[i] != '\t' && t.s[i] != '\n' && t.s[i] != '\r')
				r->empty = 0;
	}
	if (json_kind(&d, tok) == JK_INT && json_coerce_int(&d, tok, &r->tokens))
		r->has_tokens = 1;
out:
	sb_free(&t);
	json_doc_free(&d);
}

/*
 * The records are made in memory, then written by the rules of -o
 * (common/ofile.h): a file in a shared folder is replaced whole, never
 * written through a link planted under a temporary name (issue 27).
 */
int
probe_log_write(const char *path)
{
	char *text = NULL;
	size_t len = 0, i;
	FILE *fp = open_memstream(&text, &len);
	sbuf why = SBUF_INIT;
	int bad;

	if (!fp) {
		err_msg("cannot write the probe records to '%s': %s", path, strerror(errno));
		return -1;
	}
	rec_output(fp);
	for (i = 0; i < log_n; i++) {
		const struct probe_rec *r = &log_v[i];
		rec_begin(RT_probe);
		if (r->stage)
			rec_cstr(RM_probe_stage, r->stage);
		rec_cstr(RM_probe_phase, r->phase);
		rec_int(RM_probe_index, r->index);
		rec_cstr(RM_probe_endpoint, r->endpoint);
		rec_bool(RM_probe_ok, r->ok);
		rec_int(RM_probe_http_status, r->status);
		rec_num(RM_probe_latency_us, r->latency_us);
		if (r->has_tokens)
			rec_int(RM_probe_completion_tokens, r->tokens);
		rec_bool(RM_probe_empty, r->empty);
		rec_end();
	}
	rec_output(NULL);
	bad = ferror(fp);
	if (fclose(fp) != 0 || bad) {
		err_msg("cannot write the probe records to '%s': %s", path, strerror(errno));
		free(text);
		return -1;
	}
	bad = ofile_put(path, text, len, &why);
	if (bad)
		err_msg("%s", why.s);
	free(text);
	sb_free(&why);
	return bad ? -1 : 0;
}
