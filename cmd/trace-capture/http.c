/* The HTTP layer of trace-capture: one libcurl easy handle per request. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

#include "capture.h"
#include "err.h"
#include "json.h"
#include "sbuf.h"

/* Bodies we keep: the profiler endpoints answer with a few bytes of JSON. */
#define BODY_CAP	(4L << 20)
/* How much of a failing response body a message quotes. */
#define EXCERPT		400

static long connect_ms = 10000;
static double request_s = -1;

void
http_init(double connect_timeout, double request_timeout)
{
	CURLcode rc;

	if ((rc = curl_global_init(CURL_GLOBAL_DEFAULT)) != CURLE_OK)
		die(EXIT_CAPTURE, "cannot initialise libcurl: %s",
		    curl_easy_strerror(rc));
	if (connect_timeout > 0)
		connect_ms = (long)ceil(connect_timeout * 1000.0);
	request_s = request_timeout;
}

void
http_cleanup(void)
{
	curl_global_cleanup();
}

/* Keep up to BODY_CAP bytes; the rest is read and dropped. */
static size_t
on_body(char *p, size_t size, size_t nmemb, void *arg)
{
	sbuf *b = arg;
	size_t n = size * nmemb;

	if (b->len < (size_t)BODY_CAP)
		sb_add(b, p, n < BODY_CAP - b->len ? n : BODY_CAP - b->len);
	return n;
}

void
http_res_free(struct http_res *r)
{
	sb_free(&r->body);
}

/* Inactivity tracking: the time of the last byte moved either way. */
struct idle {
	double last, limit;
	curl_off_t dl, ul;
	int expired, always;
};

/*
 * libcurl calls this at least once a second.  The low-speed limit alone
 * averages over a window of several seconds, so a request whose upload
 * went out at once would wait that much longer than asked.
 */
static int
on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow,
    curl_off_t ultotal, curl_off_t ulnow)
{
	struct idle *w = arg;
	double t = now_mono();

	(void)dltotal;
	(void)ultotal;
	if (got_signal && !w->always)
		return 1;
	if (dlnow != w->dl || ulnow != w->ul) {
		w->dl = dlnow;
		w->ul = ulnow;
		w->last = t;
	} else if (t - w->last >= w->limit) {
		w->expired = 1;
		return 1;
	}
	return 0;
}

/*
 * Timeouts follow the reference's per-socket-operation semantics with a
 * low-speed limit (no byte for `idle` seconds aborts), plus a total cap of
 * four times that so a server that trickles bytes cannot hold us forever.
 */
static int call(const char *, const char *, const char *, double,
    struct http_res *, int);

int
http_call(const char *method, const char *url, const char *body,
    double timeout, struct http_res *r)
{
	return call(method, url, body, timeout, r, 0);
}

int
http_call_always(const char *method, const char *url, const char *body,
    double timeout, struct http_res *r)
{
	return call(method, url, body, timeout, r, 1);
}

static int
call(const char *method, const char *url, const char *body, double timeout,
    struct http_res *r, int always)
{
	CURL *h;
	CURLcode rc;
	struct curl_slist *hdr = NULL;
	char errbuf[CURL_ERROR_SIZE];
	double idle = request_s > 0 ? request_s : timeout;
	long idle_s = (long)ceil(idle);
	int post = strcmp(method, "GET") != 0;
	struct idle w = { 0, 0, 0, 0, 0, always };

	sb_free(&r->body);
	r->status = 0;
	r->err[0] = '\0';
	if (idle_s < 1)
		idle_s = 1;
	if ((h = curl_easy_init()) == NULL) {
		snprintf(r->err, sizeof r->err, "cannot create a libcurl handle");
		return HTTP_TRANSPORT;
	}
	errbuf[0] = '\0';
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, idle_s);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 4L * idle_s * 1000L + connect_ms);
	w.last = now_mono();
	w.limit = idle > 0 ? idle : 1;
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, &w);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#endif
	curl_easy_setopt(h, CURLOPT_USERAGENT, "trace-capture/" TRIAGE_VERSION);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &r->body);
	if (post) {
		/* "Expect:" stops libcurl from waiting for 100-continue on big prompts. */
		hdr = curl_slist_append(hdr, "Content-Type: application/json");
		hdr = curl_slist_append(hdr, "Expect:");
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
		curl_easy_setopt(h, CURLOPT_POST, 1L);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body ? body : "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
		    (curl_off_t)(body ? strlen(body) : 0));
	}
	rc = curl_easy_perform(h);
	if (rc == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	else if (rc == CURLE_ABORTED_BY_CALLBACK && got_signal && !always)
		snprintf(r->err, sizeof r->err, "interrupted by a signal");
	else if (rc == CURLE_ABORTED_BY_CALLBACK && w.expired)
		snprintf(r->err, sizeof r->err, "timed out: no data for %g s",
		    w.limit);
	else if (rc == CURLE_OPERATION_TIMEDOUT)
		snprintf(r->err, sizeof r->err, "timed out: %s",
		    errbuf[0] ? errbuf : curl_easy_strerror(rc));
	else
		snprintf(r->err, sizeof r->err, "%s",
		    errbuf[0] ? errbuf : curl_easy_strerror(rc));
	curl_easy_cleanup(h);
	curl_slist_free_all(hdr);
	if (rc != CURLE_OK)
		return HTTP_TRANSPORT;
	return r->status >= 200 && r->status < 300 ? HTTP_OK : HTTP_STATUS;
}

/* Quote at most EXCERPT bytes of the body on one line, as printable ASCII. */
static void
excerpt(const sbuf *b, sbuf *out)
{
	size_t i, n = b->len < EXCERPT ? b->len : EXCERPT;
	int space = 0;

	while (n > 0 && (unsigned char)b->s[n - 1] <= ' ')
		n--;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)b->s[i];
		if (c <= ' ') {
			space = 1;
			continue;
		}
		if (space && out->len > 0 && out->s[out->len - 1] != ' ')
			sb_addc(out, ' ');
		space = 0;
		sb_addc(out, c < 0x7f ? (char)c : '?');
	}
	if (b->len > n && n == EXCERPT)
		sb_adds(out, "...");
}

void
http_describe(const char *method, const char *url, const struct http_res *r,
    sbuf *out)
{
	sb_printf(out, "%s %s: ", method, url);
	if (r->status == 0) {
		sb_adds(out, r->err[0] ? r->err : "no response");
		return;
	}
	sb_printf(out, "HTTP %ld", r->status);
	if (r->body.len == 0) {
		sb_adds(out, " (empty body)");
		return;
	}
	sb_adds(out, ": ");
	excerpt(&r->body, out);
}

