/*
 * The HTTP layer of trace-capture: one libcurl easy handle per request,
 * to the one server --url names (issue 21): its credentials are sent as
 * credentials and never printed, its query goes with every request, a
 * redirect is followed only when asked and only to the same origin, and
 * every phase of a request has a time limit that counts every byte.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#ifdef __linux__
#include <netinet/in.h>
#include <linux/tcp.h>	/* tcpi_bytes_received: every byte, a header line's too */
#endif

#include "capture.h"
#include "err.h"
#include "esc.h"
#include "json.h"
#include "sbuf.h"
#include "xalloc.h"

/* Bodies we keep: the profiler endpoints answer with a few bytes of JSON. */
#define BODY_CAP	(4L << 20)
/* How much of a failing response body a message quotes. */
#define EXCERPT		400
/* Same-origin redirects followed at most (--follow-redirects). */
#define MAX_REDIRECTS	5

static long connect_ms = 10000;
static double request_s = -1;
static int follow_redirects;

/* The server: what http_set_base took apart. */
static struct {
	char *origin;		/* scheme://host:port, lower case, the port explicit */
	char *user, *password;	/* decoded user info, or NULL */
	char *query;		/* the query without '?', or NULL */
} srv;

void
http_init(double connect_timeout, double request_timeout, int follow)
{
	CURLcode rc;

	if ((rc = curl_global_init(CURL_GLOBAL_DEFAULT)) != CURLE_OK)
		die(EXIT_CAPTURE, "cannot initialise libcurl: %s",
		    curl_easy_strerror(rc));
	if (connect_timeout > 0)
		connect_ms = (long)ceil(connect_timeout * 1000.0);
	request_s = request_timeout;
	follow_redirects = follow;
}

void
http_cleanup(void)
{
	free(srv.origin);
	free(srv.user);
	free(srv.password);
	free(srv.query);
	memset(&srv, 0, sizeof srv);
	curl_global_cleanup();
}

/* A part of a parsed URL (heap), or NULL when it has none. */
static char *
url_part(CURLU *u, CURLUPart what, unsigned flags)
{
	char *p = NULL, *r;

	if (curl_url_get(u, what, &p, flags) != CURLUE_OK || !p)
		return NULL;
	r = xstrdup(p);
	curl_free(p);
	return r;
}

/* scheme://host:port of a URL, lower case with the port explicit; NULL if unparsable. */
static char *
origin_of(const char *url)
{
	CURLU *u = curl_url();
	char *scheme, *host, *port, *o = NULL;
	sbuf b = SBUF_INIT;
	size_t i;

	if (!u)
		return NULL;
	if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK) {
		scheme = url_part(u, CURLUPART_SCHEME, 0);
		host = url_part(u, CURLUPART_HOST, 0);
		port = url_part(u, CURLUPART_PORT, CURLU_DEFAULT_PORT);
		if (scheme && host && port) {
			sb_printf(&b, "%s://%s:%s", scheme, host, port);
			for (i = 0; i < b.len; i++)
				b.s[i] = (char)tolower((unsigned char)b.s[i]);
			o = sb_detach(&b);
		}
		free(scheme);
		free(host);
		free(port);
	}
	curl_url_cleanup(u);
	return o;
}

char *
http_set_base(const char *url)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL;
	sbuf b = SBUF_INIT, shown = SBUF_INIT;
	size_t n;

	esc_url(url, &shown);
	if (!u || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    !(scheme = url_part(u, CURLUPART_SCHEME, 0)) ||
	    !(host = url_part(u, CURLUPART_HOST, 0)) ||
	    (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0))
		die(EXIT_USAGE, "bad --url value, not an http:// or https:// URL: %s", shown.s);
	port = url_part(u, CURLUPART_PORT, 0);
	path = url_part(u, CURLUPART_PATH, 0);
	srv.user = url_part(u, CURLUPART_USER, CURLU_URLDECODE);
	srv.password = url_part(u, CURLUPART_PASSWORD, CURLU_URLDECODE);
	srv.query = url_part(u, CURLUPART_QUERY, 0);
	if (srv.query && !*srv.query) {
		free(srv.query);
		srv.query = NULL;
	}
	/* the base: no user info, query or fragment; the path without its trailing '/' */
	sb_printf(&b, "%s://%s", scheme, host);
	if (port)
		sb_printf(&b, ":%s", port);
	n = path ? strlen(path) : 0;
	while (n > 0 && path[n - 1] == '/')
		n--;
	if (n)
		sb_add(&b, path, n);
	srv.origin = origin_of(b.s);
	curl_url_cleanup(u);
	free(scheme);
	free(host);
	free(port);
	free(path);
	sb_free(&shown);
	return sb_detach(&b);
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
	sb_free(&r->location);
}

/*
 * What a request has moved so far, for its time limits: the last time any
 * byte moved (header bytes too: a server that trickles its header is not
 * silent), and where the response header stands.
 */
struct idle {
	CURL *h;
	curl_socket_t fd;	/* the connection's socket (on_socket) */
	double last, limit, header_start;
	curl_off_t dl, ul;
	unsigned long long rx0, in, seen_in;	/* response bytes: see response_bytes */
	size_t header_bytes;
	int header_done, expired, always, sent;
	enum { EXP_IDLE = 1, EXP_HEADER } why;
};

/*
 * Bytes of the response received so far.  libcurl hands over a header
 * only a whole line at a time, so a server that trickles its header looks
 * silent to the callbacks; the socket's own count (Linux TCP_INFO) sees
 * every byte.  Counted from when the request went out, after any TLS
 * handshake; elsewhere the header lines and body bytes libcurl reported.
 */
static unsigned long long
response_bytes(struct idle *w, curl_off_t dlnow)
{
	unsigned long long seen = (unsigned long long)w->header_bytes + (unsigned long long)dlnow;
#ifdef __linux__
	curl_off_t pre = 0;
	struct tcp_info ti;
	socklen_t len = sizeof ti;

	if (w->fd != CURL_SOCKET_BAD && getsockopt(w->fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0 &&
	    len >= offsetof(struct tcp_info, tcpi_bytes_received) + sizeof ti.tcpi_bytes_received) {
		if (!w->sent && curl_easy_getinfo(w->h, CURLINFO_PRETRANSFER_TIME_T, &pre) ==
		    CURLE_OK && pre > 0) {
			w->sent = 1;
			w->rx0 = ti.tcpi_bytes_received;
		}
		if (w->sent && ti.tcpi_bytes_received - w->rx0 > seen)
			return ti.tcpi_bytes_received - w->rx0;
	}
#endif
	return seen;
}

/* The socket of the request's one connection, for response_bytes. */
static int
on_socket(void *arg, curl_socket_t fd, curlsocktype purpose)
{
	struct idle *w = arg;

	if (purpose == CURLSOCKTYPE_IPCXN)
		w->fd = fd;
	return CURL_SOCKOPT_OK;
}

/* Each header line: counted, and the blank line that ends the header noted. */
static size_t
on_header(char *p, size_t size, size_t nmemb, void *arg)
{
	struct idle *w = arg;
	size_t n = size * nmemb;

	if (w->header_start == 0)
		w->header_start = now_mono();
	w->header_bytes += n;
	if (n <= 2 && (n == 0 || p[0] == '\r' || p[0] == '\n'))
		w->header_done = 1;
	else
		w->header_done = 0;	/* a 1xx header is followed by another one */
	return n;
}

/*
 * libcurl calls this at least once a second.  The low-speed limit alone
 * averages over a window of several seconds, so a request whose upload
 * went out at once would wait that much longer than asked.  Two limits:
 * no byte at all for `limit` seconds, and a response header that has
 * begun but is still not complete `limit` seconds later.
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
	w->in = response_bytes(w, dlnow);
	if (w->in > 0 && w->header_start == 0)
		w->header_start = t;
	if (dlnow != w->dl || ulnow != w->ul || w->in != w->seen_in) {
		w->dl = dlnow;
		w->ul = ulnow;
		w->seen_in = w->in;
		w->last = t;
	} else if (t - w->last >= w->limit) {
		w->expired = 1;
		w->why = EXP_IDLE;
		return 1;
	}
	if (w->header_start > 0 && !w->header_done && t - w->header_start >= w->limit) {
		w->expired = 1;
		w->why = EXP_HEADER;
		return 1;
	}
	return 0;
}

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

/*
 * One request on one handle.  Timeouts follow the reference's
 * per-socket-operation semantics with a low-speed limit (no byte for
 * `idle` seconds aborts), plus a total cap of four times that so a server
 * that trickles bytes cannot hold us forever.  *location gets the target
 * of a redirect response.
 */
static CURLcode
perform(const char *method, const char *url, const char *body, double idle,
    struct http_res *r, int always, struct idle *w, sbuf *location)
{
	CURL *h;
	CURLcode rc;
	struct curl_slist *hdr = NULL;
	char errbuf[CURL_ERROR_SIZE], *loc = NULL;
	long idle_s = (long)ceil(idle);
	int post = strcmp(method, "GET") != 0;
	sbuf full = SBUF_INIT;

	if (idle_s < 1)
		idle_s = 1;
	memset(w, 0, sizeof *w);
	w->always = always;
	sb_reset(location);
	if ((h = curl_easy_init()) == NULL) {
		snprintf(r->err, sizeof r->err, "cannot create a libcurl handle");
		return CURLE_FAILED_INIT;
	}
	w->h = h;
	w->fd = CURL_SOCKET_BAD;
	/* the query of --url goes with every request (a key, a tenant) */
	sb_adds(&full, url);
	if (srv.query && !strchr(url, '?'))
		sb_printf(&full, "?%s", srv.query);
	errbuf[0] = '\0';
	curl_easy_setopt(h, CURLOPT_URL, full.s);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
	/*
	 * on_progress enforces the limits; libcurl's low-speed check, which
	 * cannot see a header's partial lines, is only a backstop, later than
	 * ours so that it never wins the race and names the wrong cause.
	 */
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 2 * idle_s + 1);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 4L * idle_s * 1000L + connect_ms);
	w->last = now_mono();
	w->limit = idle > 0 ? idle : 1;
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, w);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_SOCKOPTFUNCTION, on_socket);
	curl_easy_setopt(h, CURLOPT_SOCKOPTDATA, w);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, w);
	/* redirects are ours to follow (same origin only): libcurl follows none */
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
	if (srv.user) {
		curl_easy_setopt(h, CURLOPT_USERNAME, srv.user);
		curl_easy_setopt(h, CURLOPT_PASSWORD, srv.password ? srv.password : "");
	}
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
	if (rc == CURLE_OK) {
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
		if (curl_easy_getinfo(h, CURLINFO_REDIRECT_URL, &loc) == CURLE_OK && loc)
			sb_adds(location, loc);
	} else if (rc == CURLE_ABORTED_BY_CALLBACK && got_signal && !always)
		snprintf(r->err, sizeof r->err, "interrupted by a signal");
	else if (rc == CURLE_ABORTED_BY_CALLBACK && w->expired && w->why == EXP_HEADER)
		snprintf(r->err, sizeof r->err, "timed out: the response header was still "
		    "incomplete %g s after it began (%llu bytes received)", w->limit, w->in);
	else if (rc == CURLE_ABORTED_BY_CALLBACK && w->expired)
		snprintf(r->err, sizeof r->err, "timed out: no data for %g s (%s)", w->limit,
		    w->in == 0 ? "waiting for the response" : w->header_done ?
		    "reading the body" : "reading the response header");
	else if (rc == CURLE_OPERATION_TIMEDOUT)
		snprintf(r->err, sizeof r->err, "timed out: %s",
		    errbuf[0] ? errbuf : curl_easy_strerror(rc));
	else
		snprintf(r->err, sizeof r->err, "%s",
		    errbuf[0] ? errbuf : curl_easy_strerror(rc));
	curl_easy_cleanup(h);
	curl_slist_free_all(hdr);
	sb_free(&full);
	return rc;
}

static int
call(const char *method, const char *url, const char *body, double timeout,
    struct http_res *r, int always)
{
	double idle = request_s > 0 ? request_s : timeout;
	struct idle w;
	sbuf cur = SBUF_INIT;
	char *origin;
	int hops;
	CURLcode rc;

	sb_free(&r->body);
	sb_free(&r->location);
	r->status = 0;
	r->err[0] = '\0';
	r->redirect_refused = 0;
	sb_adds(&cur, url);
	for (hops = 0;; hops++) {
		sb_reset(&r->body);
		rc = perform(method, cur.s, body, idle, r, always, &w, &r->location);
		if (rc != CURLE_OK)
			break;
		if (r->status < 300 || r->status >= 400 || r->location.len == 0)
			break;
		/* a redirect: followed only when asked, to the same origin, a few times */
		if (!follow_redirects) {
			r->redirect_refused = 1;
			break;
		}
		origin = origin_of(r->location.s);
		if (!origin || !srv.origin || strcmp(origin, srv.origin) != 0 ||
		    hops + 1 > MAX_REDIRECTS) {
			r->redirect_refused = origin && srv.origin && strcmp(origin, srv.origin) == 0 ?
			    3 : 2;
			free(origin);
			break;
		}
		free(origin);
		/* 307 and 308 keep the method and body; the others become a GET */
		if (r->status != 307 && r->status != 308) {
			method = "GET";
			body = NULL;
		}
		sb_reset(&cur);
		sb_add(&cur, r->location.s, r->location.len);
	}
	sb_free(&cur);
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
	sb_printf(out, "%s ", method);
	esc_url(url, out);
	sb_adds(out, ": ");
	if (r->status == 0) {
		sb_adds(out, r->err[0] ? r->err : "no response");
		return;
	}
	sb_printf(out, "HTTP %ld", r->status);
	if (r->redirect_refused) {
		sb_adds(out, " redirecting to ");
		esc_url(r->location.s ? r->location.s : "", out);
		sb_adds(out, r->redirect_refused == 1 ? " (not followed: --follow-redirects "
		    "follows redirects to the same server)" : r->redirect_refused == 2 ?
		    " (not followed: another server than --url names)" :
		    " (not followed: more than 5 redirects)");
		return;
	}
	if (r->body.len == 0) {
		sb_adds(out, " (empty body)");
		return;
	}
	sb_adds(out, ": ");
	excerpt(&r->body, out);
}

