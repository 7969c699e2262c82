/* Which kernels are collectives, and of which kind, by name. */
#include <string.h>

#include "kcat.h"
#include "sbuf.h"
#include "skew.h"
#include "text.h"

static const char *const kind_names[CK_COUNT] = {
	"", "all-reduce", "all-gather", "reduce-scatter", "all-to-all", "send-recv",
	"broadcast", "reduce", "nccl", "custom-all-reduce", "moe-dispatch", "moe-combine"
};

const char *
coll_kind_name(int kind)
{
	return kind > CK_NONE && kind < CK_COUNT ? kind_names[kind] : "";
}

int
coll_kind_syncs(int kind)
{
	return kind == CK_ALL_REDUCE || kind == CK_ALL_GATHER || kind == CK_REDUCE_SCATTER ||
	    kind == CK_ALL_TO_ALL || kind == CK_CUSTOM_ALL_REDUCE;
}

/*
 * The kernel's function name, lowercased: no leading "void ", no
 * "(anonymous namespace)::", cut at the first '<', '(' or space.  Keyword
 * tests then never see template arguments, where collective-sounding words
 * (cub::DispatchReduceByKey) are common.
 */
static void
function_name(const char *s, size_t n, sbuf *out)
{
	static const char anon[] = "(anonymous namespace)::";
	size_t i = 0;

	sb_reset(out);
	while (i < n && s[i] == ' ')
		i++;
	if (n - i >= 5 && !memcmp(s + i, "void ", 5))
		i += 5;
	while (i < n) {
		if (n - i >= sizeof anon - 1 && !memcmp(s + i, anon, sizeof anon - 1)) {
			i += sizeof anon - 1;
			continue;
		}
		if (s[i] == '<' || s[i] == '(' || s[i] == ' ')
			break;
		sb_addc(out, s[i++]);
	}
	text_lower(out->s, out->len);
}

static int
has(const sbuf *b, const char *w)
{
	return text_has(b->s, b->len, w);
}

static int
nccl_kind(const sbuf *b)
{
	if (has(b, "allreduce"))
		return CK_ALL_REDUCE;
	if (has(b, "allgather"))
		return CK_ALL_GATHER;
	if (has(b, "reducescatter"))
		return CK_REDUCE_SCATTER;
	if (has(b, "alltoall"))
		return CK_ALL_TO_ALL;
	if (has(b, "sendrecv") || has(b, "_send") || has(b, "_recv"))
		return CK_SEND_RECV;
	if (has(b, "broadcast"))
		return CK_BROADCAST;
	if (has(b, "_reduce"))
		return CK_REDUCE;
	return CK_NCCL;
}

int
coll_kind(const char *name, size_t n)
{
	sbuf b = SBUF_INIT;
	const char *last;
	size_t lastlen;
	int k = CK_NONE;

	function_name(name, n, &b);
	if (b.len == 0)
		goto out;
	if (text_starts(b.s, b.len, "nccl") || text_starts(b.s, b.len, "rccl")) {
		k = nccl_kind(&b);
		goto out;
	}
	/*
	 * MoE expert-parallel exchange: a dispatch or combine kernel (by its last
	 * name component) that the category rules call communication, that is
	 * one of an EP library's namespace (DeepEP, dpsk::ep, UCCL, MORI) or
	 * named after the all-to-all (moeA2ADispatchKernel); elsewhere the words
	 * are no collective (_combined_routing_compute, a norm's dispatch).
	 */
	last = b.s;
	while (strstr(last, "::"))
		last = strstr(last, "::") + 2;
	lastlen = b.len - (size_t)(last - b.s);
	if ((text_has(last, lastlen, "dispatch") || text_has(last, lastlen, "combine")) &&
	    strcmp(kernel_category(name, n), "communication") == 0) {
		k = text_has(last, lastlen, "dispatch") ? CK_MOE_DISPATCH : CK_MOE_COMBINE;
		goto out;
	}
	if (has(&b, "all_reduce") || has(&b, "allreduce") || has(&b, "cross_device_reduce") ||
	    has(&b, "quickreduce") || has(&b, "quick_reduce"))
		k = CK_CUSTOM_ALL_REDUCE;
	else if (has(&b, "all_gather") || has(&b, "allgather"))
		k = CK_ALL_GATHER;
	else if (has(&b, "reduce_scatter") || has(&b, "reducescatter"))
		k = CK_REDUCE_SCATTER;
	else if (has(&b, "all_to_all") || has(&b, "alltoall"))
		k = CK_ALL_TO_ALL;
out:
	sb_free(&b);
	return k;
}
