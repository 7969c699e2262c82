/*
 * libFuzzer harness for what trace-capture does with servers' replies
 * (cmd/trace-capture/probe.c, http.c).  The input is a --url line, then
 * replies, each a 2-byte status (0: no response), a 2-byte length and that
 * many body bytes; the HTTP layer's http_call is replaced by one that
 * hands them out in order (past the last: no response).  With them the
 * harness detects the framework, discovers the model and sends probes of
 * both kinds, and describes every reply (excerpts, masked URLs) as failure
 * messages do.  Leak checks are off: the capture's failures end in die(),
 * which the tool does by exiting.
 */
#define http_call real_http_call
#define http_call_always real_http_call_always
#include "../../cmd/trace-capture/http.c"
#undef http_call
#undef http_call_always

#include <setjmp.h>
#include <stdlib.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int __lsan_is_turned_off(void);

int
__lsan_is_turned_off(void)
{
	return 1;
}

static const unsigned char *rp, *re;

int
http_call(const char *method, const char *url, const char *body, double timeout,
    struct http_res *r)
{
	unsigned st, len;

	(void)method;
	(void)url;
	(void)body;
	(void)timeout;
	sb_free(&r->body);
	sb_free(&r->location);
	r->status = 0;
	r->redirect_refused = 0;
	snprintf(r->err, sizeof r->err, "Connection refused");
	if (re - rp < 4)
		return HTTP_TRANSPORT;
	st = (unsigned)rp[0] << 8 | rp[1];
	len = (unsigned)rp[2] << 8 | rp[3];
	rp += 4;
	if (len > (size_t)(re - rp))
		len = (unsigned)(re - rp);
	sb_add(&r->body, (const char *)rp, len);
	rp += len;
	if (st == 0)
		return HTTP_TRANSPORT;
	r->status = st % 600;
	if (r->status >= 300 && r->status < 400) {
		sb_adds(&r->location, "http://user:pw@elsewhere:1/x");
		r->redirect_refused = 2;
	}
	return r->status >= 200 && r->status < 300 ? HTTP_OK : HTTP_STATUS;
}

int
http_call_always(const char *method, const char *url, const char *body, double timeout,
    struct http_res *r)
{
	return http_call(method, url, body, timeout, r);
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	const unsigned char *nl = memchr(data, '\n', size);
	struct opts o = { 0 };
	struct plan p = { 0 };
	struct http_res r = { 0 };
	sbuf url = SBUF_INIT, err = SBUF_INIT;
	char *model = NULL;

	if (!nl)
		return 0;
	sb_add(&url, (const char *)data, (size_t)(nl - data));
	rp = nl + 1;
	re = data + size;
	o.url = sb_str(&url);
	o.prefix = "triage-trace";
	o.num_steps = 2;
	o.warmup_steps = 1;
	o.probe_requests = 1;
	o.probe_prompt = "hello";
	o.workload = "both";
	o.prefill_in = 3;
	o.prefill_out = 1;
	o.decode_in = 1;
	o.decode_out = 2;
	o.wait_timeout = o.settle_delay = o.poll_interval = -1;
	fuzz_die_armed = 1;
	if (setjmp(fuzz_die_jmp) == 0) {
		sb_reset(&err);
		esc_url(o.url, &err);
		if (strncmp(o.url, "http://", 7) != 0 && strncmp(o.url, "https://", 8) != 0)
			o.url = "http://127.0.0.1:9";
		o.base = http_set_base(o.url);
		o.framework = detect_framework(&o, NULL);
		build_plan(&o, "prefill", &p);
		sb_reset(&err);
		probes(&o, NULL, &p, 0, 2, 1, "capture", &err);
		model = discover_model(&o);
		sb_reset(&err);
		probes(&o, model, &p, 0, 2, 1, "capture", &err);
		while (re - rp >= 4) {
			sb_reset(&err);
			http_call("GET", o.base, NULL, 1, &r);
			http_describe("GET", o.base, &r, &err);
		}
	}
	fuzz_die_armed = 0;
	free(model);
	free(p.prompt);
	free(o.base);
	http_res_free(&r);
	free(srv.origin);	/* http_cleanup without curl_global_cleanup */
	free(srv.user);
	free(srv.password);
	free(srv.query);
	memset(&srv, 0, sizeof srv);
	sb_free(&url);
	sb_free(&err);
	return 0;
}
