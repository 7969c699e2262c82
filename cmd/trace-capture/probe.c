/*
 * What trace-capture sends besides the profiler calls (spec
 * capture-and-cli.md §5.6, §6.5, §6.6, §7): framework detection from the
 * URL, model discovery, the probe plans and the probe requests themselves.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "err.h"
#include "json.h"
#include "rules.h"
#include "sbuf.h"
#include "text.h"
#include "xalloc.h"

static long long
max_ll(long long a, long long b)
{
	return a > b ? a : b;
}

char *
url_of(const struct opts *o, const char *path)
{
	sbuf b = SBUF_INIT;

	sb_printf(&b, "%s%s", o->base, path);
	return sb_detach(&b);
}

/* synthetic_prompt(n): the word "profile" max(1, n) times (§7.2). */
static char *
synthetic_prompt(long long n)
{
	sbuf b = SBUF_INIT;
	long long i;

	n = max_ll(1, n);
	sb_grow(&b, (size_t)n * 8);
	for (i = 0; i < n; i++)
		sb_adds(&b, i ? " profile" : "profile");
	return sb_detach(&b);
}

void
build_plan(const struct opts *o, const char *stage, struct plan *p)
{
	long long n = max_ll(1, o->num_steps);
	long long pr = max_ll(1, max_ll(0, o->probe_requests));
	long long w = max_ll(0, o->warmup_steps);
	long long t;

	p->stage = stage;
	if (stage && strcmp(stage, "prefill") == 0) {
		p->prompt = synthetic_prompt(o->prefill_in);
		t = max_ll(1, o->prefill_out);
		p->warm_n = w;
		p->warm_tok = t;
		p->cap_n = max_ll(pr, n);
	} else if (stage) {
		p->prompt = synthetic_prompt(o->decode_in);
		t = max_ll(1, o->decode_out);
		p->warm_n = w > 0 ? 1 : 0;
		p->warm_tok = max_ll(1, w);
		p->cap_n = pr;
	} else {
		p->prompt = xstrdup(o->probe_prompt);
		t = o->probe_max_new_tokens ? o->probe_max_new_tokens :
		    max_ll(64, o->num_steps * 8);
		t = max_ll(1, t);
		p->warm_n = w;
		p->warm_tok = t;
		p->cap_n = pr;
	}
	p->cap_tok = t;
}

/*
 * unique_probe_prompt (§6.5): the marker replaces the first word of a
 * prompt with two or more words and is prepended to a one-word prompt.
 */
static void
unique_prompt(const char *prompt, long long i, sbuf *out)
{
	size_t n = strlen(prompt), k = 0, w;
	const char *suffix = prompt, *r;
	size_t slen = n, rl;

	while (k < n && (w = text_ws_len(prompt + k, n - k)) > 0)
		k += w;
	while (k < n && text_ws_len(prompt + k, n - k) == 0)
		k++;
	while (k < n && (w = text_ws_len(prompt + k, n - k)) > 0)
		k += w;
	if (k < n) {
		suffix = prompt + k;
		slen = n - k;
	}
	sb_reset(out);
	sb_printf(out, "profile_probe_%lld ", max_ll(0, i));
	sb_add(out, suffix, slen);
	r = text_strip(out->s, out->len, &rl);
	memmove(out->s, r, rl);
	out->len = rl;
	out->s[rl] = '\0';
}

/* ---- framework detection from the URL (§5.6) ---- */

static int
get_json(const struct opts *o, const char *path, double timeout,
    struct http_res *r, json_doc *d, int *transport)
{
	char *url = url_of(o, path);
	int rc = http_call("GET", url, NULL, timeout, r);

	free(url);
	if (rc == HTTP_TRANSPORT)
		(*transport)++;
	return rc == HTTP_OK && r->body.len > 0 &&
	    json_valid(r->body.s, r->body.len) &&
	    json_parse(d, r->body.s, r->body.len) == 0;
}

const char *
detect_framework(const struct opts *o, const char *outdir_abs)
{
	static const char *const sgl_keys[] = { "internal_states",
	    "tokenizer_path", "prefill", "decode" };
	struct http_res r = { 0 };
	json_doc d = { 0 };
	const char *fw = NULL, *why = NULL;
	int down = 0, i, di;
	sbuf err = SBUF_INIT;

	if (outdir_abs && (fw = framework_text_hint(outdir_abs,
	    strlen(outdir_abs))) != NULL)
		why = "the --output-dir path";
	if (!fw && get_json(o, "/server_info", T_INFO, &r, &d, &down) &&
	    json_kind(&d, 0) == JK_OBJ)
		for (i = 0; i < 4 && !fw; i++)
			if (json_get(&d, 0, sgl_keys[i]) >= 0) {
				fw = "sglang";
				why = "GET /server_info";
			}
	if (!fw && get_json(o, "/readiness", T_READY, &r, &d, &down)) {
		fw = "tokenspeed";
		why = "GET /readiness";
	}
	if (!fw && get_json(o, "/v1/models", T_MODELS, &r, &d, &down) &&
	    json_kind(&d, 0) == JK_OBJ && (di = json_get(&d, 0, "data")) >= 0 &&
	    json_kind(&d, di) == JK_ARR) {
		fw = "vllm";
		why = "GET /v1/models";
	}
	if (!fw && down == 3) {
		/* Nothing answered at all: say so instead of guessing SGLang. */
		char *url = url_of(o, "/v1/models");
		http_describe("GET", url, &r, &err);
		free(url);	/* the message holds the URL now */
		die(EXIT_CAPTURE, "cannot reach the server to detect its framework: %s",
		    err.s);
	}
	if (!fw) {
		fw = "sglang";
		why = "nothing matched; the default";
	}
	note_msg("framework: %s (%s)", framework_display(fw), why);
	http_res_free(&r);
	json_doc_free(&d);
	return fw;
}

/* ---- probes (§6.5) and model discovery (§6.6) ---- */

char *
discover_model(const struct opts *o)
{
	struct http_res r = { 0 };
	json_doc d = { 0 };
	char *url = url_of(o, "/v1/models");
	sbuf msg = SBUF_INIT, id = SBUF_INIT;
	int rc = http_call("GET", url, NULL, T_MODELS, &r), di, e0, idx;

	if (rc != HTTP_OK || r.body.len == 0 || !json_valid(r.body.s, r.body.len) ||
	    json_parse(&d, r.body.s, r.body.len) != 0 || json_kind(&d, 0) != JK_OBJ) {
		http_describe("GET", url, &r, &msg);
		if (rc == HTTP_OK)
			sb_adds(&msg, " (not a JSON object)");
		die(EXIT_CAPTURE, "Could not read %s: %s", url, msg.s);
	}
	di = json_get(&d, 0, "data");
	if (json_kind(&d, di) != JK_ARR || d.tok[di].size == 0) {
		http_describe("GET", url, &r, &msg);
		die(EXIT_CAPTURE, "No models returned by %s: %s", url, msg.s);
	}
	e0 = di + 1;
	idx = json_get(&d, e0, "id");
	if (json_kind(&d, e0) != JK_OBJ || !json_truthy(&d, idx)) {
		http_describe("GET", url, &r, &msg);
		die(EXIT_CAPTURE, "Malformed /v1/models payload from %s: %s",
		    o->base, msg.s);
	}
	json_pystr(&d, idx, &id, NULL);
	free(url);
	http_res_free(&r);
	json_doc_free(&d);
	return sb_detach(&id);
}

/* A response body that the reference parses: empty or JSON. */
static int
empty_or_json(const struct http_res *r)
{
	return r->body.len == 0 || json_valid(r->body.s, r->body.len);
}

/*
 * One probe request with index i.  Returns 0, or -1 with the reason in
 * err.  The OpenAI path falls back once from chat to completions on any
 * failure, as the reference does.
 */
static int
probe(const struct opts *o, const char *model, const struct plan *p,
    long long i, long long tokens, const char *what, sbuf *err)
{
	sbuf prompt = SBUF_INIT, body = SBUF_INIT;
	struct http_res r = { 0 };
	struct probe_rec pr = { 0 };
	double t0 = now_mono();
	const char *ep;
	char *url;
	int rc, ok;

	unique_prompt(p->prompt, i, &prompt);
	if (model == NULL) {
		sb_adds(&body, "{\"text\": ");
		json_quote(&body, prompt.s, prompt.len);
		sb_printf(&body, ", \"sampling_params\": {\"sampling_seed\": %lld, "
		    "\"temperature\": 0.0, \"max_new_tokens\": %lld}, "
		    "\"stream\": false}", max_ll(0, i), tokens);
		url = url_of(o, ep = "/generate");
		rc = http_call("POST", url, body.s, T_PROBE, &r);
		ok = rc == HTTP_OK && empty_or_json(&r);
		if (!ok) {
			http_describe("POST", url, &r, err);
			if (rc == HTTP_OK)
				sb_adds(err, " (not JSON)");
		}
		free(url);
	} else {
		sb_adds(&body, "{\"model\": ");
		json_quote(&body, model, strlen(model));
		sb_adds(&body, ", \"messages\": [{\"role\": \"user\", \"content\": ");
		json_quote(&body, prompt.s, prompt.len);
		sb_printf(&body, "}], \"temperature\": 0.0, \"max_tokens\": %lld, "
		    "\"stream\": false}", tokens);
		url = url_of(o, ep = "/v1/chat/completions");
		rc = http_call("POST", url, body.s, T_PROBE, &r);
		ok = rc == HTTP_OK && empty_or_json(&r);
		if (!ok && got_signal) {
			http_describe("POST", url, &r, err);
		} else if (!ok) {
			http_describe("POST", url, &r, err);
			sb_adds(err, "; fallback ");
			free(url);
			sb_reset(&body);
			sb_adds(&body, "{\"model\": ");
			json_quote(&body, model, strlen(model));
			sb_adds(&body, ", \"prompt\": ");
			json_quote(&body, prompt.s, prompt.len);
			sb_printf(&body, ", \"temperature\": 0.0, \"max_tokens\": %lld, "
			    "\"stream\": false}", tokens);
			url = url_of(o, ep = "/v1/completions");
			rc = http_call("POST", url, body.s, T_PROBE, &r);
			ok = rc == HTTP_OK && empty_or_json(&r);
			if (!ok) {
				http_describe("POST", url, &r, err);
				if (rc == HTTP_OK)
					sb_adds(err, " (not JSON)");
			}
		}
		free(url);
	}
	pr.stage = p->stage;
	pr.phase = what;
	pr.index = i;
	snprintf(pr.endpoint, sizeof pr.endpoint, "%s", ep);
	pr.ok = ok;
	pr.status = r.status;
	pr.latency_us = (now_mono() - t0) * 1e6;
	probe_answer(r.body.s, r.body.len, &pr);
	probe_log(&pr);
	sb_free(&prompt);
	sb_free(&body);
	http_res_free(&r);
	return ok ? 0 : -1;
}

/* Send `count` probes with indices from `offset`; -1 with err on failure. */
int
probes(const struct opts *o, const char *model, const struct plan *p,
    long long offset, long long count, long long tokens, const char *what,
    sbuf *err)
{
	long long k;
	sbuf why = SBUF_INIT;

	for (k = 0; k < count; k++) {
		sb_reset(&why);
		if (probe(o, model, p, offset + k, tokens, what, &why) != 0) {
			sb_printf(err, "%s request %lld of %lld failed: %s", what,
			    k + 1, count, why.s);
			sb_free(&why);
			return -1;
		}
	}
	sb_free(&why);
	return 0;
}
