/*
 * The report as one self-contained HTML file: no network, no external
 * assets.  The tables are written here (short names, the full name on
 * hover); a small script makes them sortable and draws, per stage, a
 * stacked bar of kernel time by category (the headline's base), a bar chart of the
 * heaviest kernels, a strip of step durations and, with kernel-roofline's
 * records, a log-log roofline of the modeled kernels, as inline SVG, from data
 * embedded in the page.  The script marks the body data-ready="1" when it
 * ran and counts errors in data-errors, which the tests read back from a
 * headless browser.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "esc.h"
#include "json.h"
#include "kname.h"
#include "num.h"
#include "render.h"
#include "rules.h"

/* Characters of a bar label: what fits left of the bars at 11 px. */
#define CHART_LABEL 52

/*
 * Text as HTML text or an attribute value: & < > " ' as entities, a line
 * break as <br> (attr 1, an attribute: as &#10;; 2, the title: as a
 * space), control characters as
 * esc_ctrl shows them (issue 27).
 */
static void
esc_html(sbuf *out, const char *s, int attr)
{
	sbuf t = SBUF_INIT;
	size_t i;

	esc_ctrl(s, strlen(s), ESC_KEEP_TAB | ESC_KEEP_NL, &t);
	for (i = 0; i < t.len; i++) {
		switch (t.s[i]) {
		case '&':
			sb_adds(out, "&amp;");
			break;
		case '<':
			sb_adds(out, "&lt;");
			break;
		case '>':
			sb_adds(out, "&gt;");
			break;
		case '"':
			sb_adds(out, "&quot;");
			break;
		case '\'':
			sb_adds(out, "&#39;");
			break;
		case '\n':
			sb_adds(out, attr == 2 ? " " : attr ? "&#10;" : "<br>");
			break;
		default:
			sb_addc(out, t.s[i]);
		}
	}
	sb_free(&t);
}

static void
esc(sbuf *out, const char *s)
{
	esc_html(out, s, 0);
}

/* The page's <title>: text only, a line break a space (issue 27 item 14). */
static void
esc_title(sbuf *out, const char *s)
{
	esc_html(out, s, 2);
}

/*
 * A string of the chart data: control characters shown as in the tables
 * (and as in data-stage, which looks the stage up), then JSON-quoted.
 */
static void
chart_str(sbuf *out, const char *s)
{
	sbuf t = SBUF_INIT;

	esc_ctrl(s, strlen(s), ESC_KEEP_TAB | ESC_KEEP_NL, &t);
	json_quote(out, sb_str(&t), t.len);
	sb_free(&t);
}

static const char css[] =
    "body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1b1f24;background:#fff}"
    "main{max-width:1200px;margin:0 auto;padding:16px 24px}"
    "h1{font-size:22px;margin:18px 0 8px}h2{font-size:18px;margin:26px 0 6px;"
    "border-bottom:1px solid #d0d7de;padding-bottom:4px}h3{font-size:15px;margin:18px 0 6px}"
    "ul.facts{list-style:none;padding:0;margin:0 0 10px}ul.facts li{margin:2px 0}"
    ".banner{padding:8px 12px;border-radius:6px;margin:10px 0;font-weight:600}"
    ".banner.ok{background:#dafbe1}.banner.degraded{background:#fff8c5}"
    ".banner.unusable{background:#ffebe9}.note{background:#f6f8fa;padding:6px 10px;"
    "border-left:3px solid #8c959f;margin:6px 0}.headline{font-weight:600}"
    "table{border-collapse:collapse;margin:6px 0 4px;width:100%}"
    "th,td{border:1px solid #d0d7de;padding:3px 6px;vertical-align:top;text-align:left}"
    "th{background:#f6f8fa;cursor:pointer;user-select:none}td.n,th.n{text-align:right}"
    "td.k{font-family:ui-monospace,monospace;font-size:12px}.more{color:#57606a}"
    ".chart{margin:6px 0}.chart svg{width:100%;display:block}.legend{font-size:12px}"
    ".legend span{display:inline-block;margin-right:12px}.legend i{display:inline-block;"
    "width:10px;height:10px;margin-right:4px;vertical-align:middle}"
    "nav.toc{background:#f6f8fa;padding:8px 16px}nav.toc a{margin-right:14px}";

static const char js[] =
    "(function(){\n"
    "var body=document.body;\n"
    "var data=JSON.parse(document.getElementById('chart-data').textContent);\n"
    "var NS='http://www.w3.org/2000/svg';\n"
    "var colors={gemm:'#0969da',attention:'#8250df',moe:'#bf3989',communication:'#cf222e',"
    "memcpy:'#bc4c00',memset:'#d4a72c',memory:'#bc4c00',norm:'#1a7f37',elementwise:'#57606a',"
    "activation:'#4ac26b',rope:'#54aeff',softmax:'#a475f9',quantize:'#e16f24',"
    "reduce_topk:'#768390',kv_cache:'#fb8f44',convolution:'#0550ae',idle:'#eaeef2'};\n"
    "function color(c,i){return colors[c]||['#6e7781','#953800','#116329','#0a3069',"
    "'#8a4600','#6639ba'][i%6];}\n"
    "function el(n,a){var e=document.createElementNS(NS,n);for(var k in a)e.setAttribute(k,a[k]);"
    "return e;}\n"
    "function ms(us){return (us/1000).toFixed(2)+' ms';}\n"
    "function stack(box,st){var segs=st.cats.slice();"
    "var tot=0;segs.forEach(function(s){tot+=s.us;});if(!(tot>0))return;"
    "var cap=document.createElement('div');cap.className='legend';cap.textContent="
    "'Kernel time by category (shares of the sum of kernel durations, as in the headline)';"
    "box.appendChild(cap);"
    "var svg=el('svg',{viewBox:'0 0 1000 28',preserveAspectRatio:'none',height:'28'});"
    "var x=0;segs.forEach(function(s,i){var w=1000*s.us/tot;var r=el('rect',{x:x,y:0,"
    "width:Math.max(w,0.5),height:28,fill:color(s.name,i),'class':'seg','data-cat':s.name});"
    "var t=el('title',{});t.textContent=s.name+': '+ms(s.us)+' ('+(100*s.us/tot).toFixed(1)"
    "+'%)';r.appendChild(t);svg.appendChild(r);x+=w;});box.appendChild(svg);"
    "var lg=document.createElement('div');lg.className='legend';segs.forEach(function(s,i){"
    "var sp=document.createElement('span');var sw=document.createElement('i');"
    "sw.style.background=color(s.name,i);sp.appendChild(sw);sp.appendChild("
    "document.createTextNode(s.name+' '+(100*s.us/tot).toFixed(1)+'%'));lg.appendChild(sp);});"
    "box.appendChild(lg);}\n"
    "function bars(box,st){var ks=st.top;if(!ks.length)return;var max=ks[0].us;"
    "var h=20*ks.length;var svg=el('svg',{viewBox:'0 0 1000 '+h,height:h});"
    "ks.forEach(function(k,i){var w=max>0?620*k.us/max:0;var r=el('rect',{x:360,y:i*20+3,"
    "width:Math.max(w,1),height:14,fill:color(k.cat,i),'class':'bar'});var t=el('title',{});"
    "t.textContent=k.full+': '+ms(k.us);r.appendChild(t);svg.appendChild(r);"
    "var l=el('text',{x:354,y:i*20+14,'text-anchor':'end','font-size':'11'});"
    "l.textContent=k.name;svg.appendChild(l);"
    "var v=el('text',{x:366+w,y:i*20+14,'font-size':'11'});v.textContent=ms(k.us);"
    "svg.appendChild(v);});box.appendChild(svg);}\n"
    "function steps(box,st){var s=st.steps;if(!s.length)return;var max=Math.max.apply(null,s);"
    "var svg=el('svg',{viewBox:'0 0 1000 40',preserveAspectRatio:'none',height:'40'});"
    "var w=1000/s.length;s.forEach(function(u,i){var hh=max>0?38*u/max:0;var r=el('rect',"
    "{x:i*w,y:40-hh,width:Math.max(w-1,0.5),height:hh,fill:'#0969da','class':'step'});"
    "var t=el('title',{});t.textContent='step '+(i+1)+': period '+ms(u);r.appendChild(t);"
    "svg.appendChild(r);});box.appendChild(svg);}\n"
    /* the roofline: log-log, FLOP/byte against TFLOP/s, the memory roof and each type's peak */
    "function roof(box,st){var R=st.roof;if(!R||!R.pts.length)return;var W=1000,H=360,"
    "L=60,B=36,T=10,Rm=110;var used={};R.pts.forEach(function(p){if(p.dtype)used[p.dtype]=1;});"
    "var peaks=[];for(var k in R.peaks)if(used[k])peaks.push({k:k,v:R.peaks[k]});"
    "var xs=R.pts.map(function(p){return p.x;}),ys=R.pts.map(function(p){return p.y;});"
    "peaks.forEach(function(p){xs.push(1000*p.v/R.bw);ys.push(p.v);});"
    "var lx0=Math.floor(Math.log10(Math.min.apply(null,xs)))-1,lx1=Math.ceil(Math.log10("
    "Math.max.apply(null,xs)))+1,ly0=Math.floor(Math.log10(Math.min.apply(null,ys)))-1,"
    "ly1=Math.ceil(Math.log10(Math.max.apply(null,ys)))+1;"
    "function X(x){return L+(W-L-Rm)*(Math.log10(x)-lx0)/(lx1-lx0);}"
    "function Y(y){return T+(H-T-B)*(ly1-Math.log10(y))/(ly1-ly0);}"
    "var svg=el('svg',{viewBox:'0 0 '+W+' '+H,height:H,'class':'roofline'});"
    "for(var e=lx0;e<=lx1;e++){var g=el('line',{x1:X(Math.pow(10,e)),x2:X(Math.pow(10,e)),"
    "y1:T,y2:H-B,stroke:'#eaeef2'});svg.appendChild(g);var t=el('text',{x:X(Math.pow(10,e)),"
    "y:H-B+14,'text-anchor':'middle','font-size':'11'});t.textContent='1e'+e;svg.appendChild(t);}"
    "for(e=ly0;e<=ly1;e++){g=el('line',{x1:L,x2:W-Rm,y1:Y(Math.pow(10,e)),y2:Y(Math.pow(10,e)),"
    "stroke:'#eaeef2'});svg.appendChild(g);t=el('text',{x:L-4,y:Y(Math.pow(10,e))+4,"
    "'text-anchor':'end','font-size':'11'});t.textContent='1e'+e;svg.appendChild(t);}"
    "var xl=el('text',{x:(L+W-Rm)/2,y:H-4,'text-anchor':'middle','font-size':'12'});"
    "xl.textContent='FLOP per byte';svg.appendChild(xl);var yl=el('text',{x:12,y:(T+H-B)/2,"
    "'font-size':'12',transform:'rotate(-90 12 '+(T+H-B)/2+')','text-anchor':'middle'});"
    "yl.textContent='TFLOP/s';svg.appendChild(yl);"
    "peaks.forEach(function(p,i){var xr=1000*p.v/R.bw,x0=Math.pow(10,lx0);"
    "var m=el('polyline',{points:X(x0)+','+Y(R.bw*x0/1000)+' '+X(xr)+','+Y(p.v)+' '+"
    "X(Math.pow(10,lx1))+','+Y(p.v),fill:'none',stroke:color(p.k,i+1),'stroke-width':2,"
    "'class':'roof','data-dtype':p.k});svg.appendChild(m);var lt=el('text',{x:W-Rm+4,"
    "y:Y(p.v)+4,'font-size':'11'});lt.textContent=p.k+' '+p.v+' TFLOP/s';svg.appendChild(lt);});"
    "R.pts.forEach(function(p,i){var c=el('circle',{cx:X(p.x),cy:Y(p.y),r:4+Math.min(6,"
    "Math.sqrt(p.us/1000)),fill:'#0969da','fill-opacity':0.6,'class':'point'});"
    "var tt=el('title',{});tt.textContent=p.name+' '+p.shape+': '+p.y.toFixed(1)+' TFLOP/s at '"
    "+p.x.toFixed(1)+' FLOP/byte, '+ms(p.us)+(p.pct>=0?', '+p.pct.toFixed(0)+'% of roof':'');"
    "c.appendChild(tt);svg.appendChild(c);});box.appendChild(svg);"
    "var lg=document.createElement('div');lg.className='legend';lg.textContent='Memory roof '+"
    "R.bw+' GB/s; one point per kernel and shape with FLOPs (memory-only models are not drawn).';"
    "box.appendChild(lg);}\n"
    "document.querySelectorAll('.chart').forEach(function(box){var st=data[box.dataset.run]"
    "[box.dataset.stage];if(!st)return;if(box.dataset.chart==='stack')stack(box,st);"
    "else if(box.dataset.chart==='top')bars(box,st);else if(box.dataset.chart==='roof')"
    "roof(box,st);else steps(box,st);});\n"
    "document.querySelectorAll('table.sortable').forEach(function(tb){var ths=tb.tHead.rows[0]"
    ".cells;Array.prototype.forEach.call(ths,function(th,ci){th.addEventListener('click',"
    "function(){var num=th.classList.contains('n');var dir=th.dataset.dir==='asc'?-1:1;"
    "th.dataset.dir=dir>0?'asc':'desc';var rows=Array.prototype.slice.call(tb.tBodies[0].rows);"
    "rows.sort(function(a,b){var x=a.cells[ci].dataset.v,y=b.cells[ci].dataset.v;"
    "if(num)return dir*(parseFloat(x)-parseFloat(y));return dir*x.localeCompare(y);});"
    "rows.forEach(function(r){tb.tBodies[0].appendChild(r);});});});});\n"
    "body.dataset.ready='1';\n"
    "})();\n";

/* Chart data of one run: {stage: {cats, idle, top, steps}}. */
static void
chart_data(sbuf *out, const struct doc *d)
{
	size_t i, j, r, k;
	char buf[40], *label[10];
	const char *top[10];

	sb_addc(out, '{');
	for (i = 0; i < d->ncharts; i++) {
		const struct stagechart *c = &d->charts[i];
		const struct tab *kt = NULL;
		if (i)
			sb_addc(out, ',');
		chart_str(out, c->stage);
		sb_adds(out, ":{\"cats\":[");
		for (j = 0; j < c->ncat; j++) {
			sb_adds(out, j ? ",{\"name\":" : "{\"name\":");
			chart_str(out, c->cat[j]);
			sb_printf(out, ",\"us\":%s}", num_json(c->cat_us[j], buf));
		}
		sb_printf(out, "],\"idle\":%s,\"top\":[", c->idle_us >= 0 ?
		    num_json(c->idle_us, buf) : "-1");
		for (j = 0; j < d->nsecs && !kt; j++)
			for (k = 0; k < d->secs[j].ntabs; k++)
				if (strcmp(d->secs[j].tabs[k].id, "kernel") == 0 &&
				    d->secs[j].tabs[k].stage &&
				    strcmp(d->secs[j].tabs[k].stage, c->stage) == 0)
					kt = &d->secs[j].tabs[k];
		/* the bars' labels: short names of their own, unique among the bars */
		for (r = 0; kt && r < kt->nrows && r < 10; r++) {
			const struct cell *x = &kt->cells[r * kt->ncols];
			top[r] = x[0].full ? x[0].full : x[0].text;
		}
		kname_short_all(top, r, CHART_LABEL, label);
		for (r = 0; kt && r < kt->nrows && r < 10; r++) {
			const struct cell *x = &kt->cells[r * kt->ncols];
			sb_adds(out, r ? ",{\"name\":" : "{\"name\":");
			chart_str(out, label[r]);
			free(label[r]);
			sb_adds(out, ",\"full\":");
			chart_str(out, x[0].full ? x[0].full : x[0].text);
			sb_adds(out, ",\"cat\":");
			chart_str(out, x[1].text);
			sb_printf(out, ",\"us\":%s}", num_json(x[2].num, buf));
		}
		sb_adds(out, "],\"steps\":[");
		for (j = 0; j < c->nstep; j++)
			sb_printf(out, "%s%s", j ? "," : "", num_json(c->step_us[j], buf));
		sb_adds(out, "]");
		if (c->roof_bw > 0 && c->roof_points)
			sb_printf(out, ",\"roof\":{\"bw\":%s,\"peaks\":%s,\"pts\":%s}",
			    num_json(c->roof_bw, buf), c->roof_peaks ? c->roof_peaks : "{}",
			    c->roof_points);
		sb_adds(out, "}");
	}
	sb_addc(out, '}');
}

static void
html_table(sbuf *out, const struct tab *t)
{
	size_t r, c;
	char buf[40];

	if (t->nrows == 0) {
		sb_adds(out, "<p class=\"empty\">");
		esc(out, t->empty ? t->empty : "No rows.");
		sb_adds(out, "</p>\n");
		return;
	}
	sb_printf(out, "<table class=\"sortable\" data-table=\"%s\"><thead><tr>", t->id);
	for (c = 0; c < t->ncols; c++) {
		sb_printf(out, "<th%s>", t->cols[c].num ? " class=\"n\"" : "");
		esc(out, t->cols[c].title);
		sb_adds(out, "</th>");
	}
	sb_adds(out, "</tr></thead><tbody>\n");
	for (r = 0; r < t->nrows; r++) {
		sb_adds(out, "<tr>");
		for (c = 0; c < t->ncols; c++) {
			const struct cell *x = &t->cells[r * t->ncols + c];
			const char *cls = t->cols[c].num ? "n" : strcmp(t->cols[c].key, "kernel") == 0 ?
			    "k" : NULL;
			sb_adds(out, "<td");
			if (cls)
				sb_printf(out, " class=\"%s\"", cls);
			if (x->full) {
				sb_adds(out, " title=\"");
				esc_html(out, x->full, 1);
				sb_addc(out, '"');
			}
			sb_adds(out, " data-v=\"");
			if (x->has_num)
				sb_adds(out, num_json(x->num, buf));
			else
				esc_html(out, x->text, 1);
			sb_adds(out, "\">");
			esc(out, x->text);
			sb_adds(out, "</td>");
		}
		sb_adds(out, "</tr>\n");
	}
	sb_adds(out, "</tbody></table>\n");
}

static void
html_run(sbuf *out, const struct doc *d, size_t run)
{
	size_t i, j;

	sb_printf(out, "<article class=\"run\" id=\"run-%zu\">\n<h1>Triage report: ", run + 1);
	esc(out, d->title);
	sb_adds(out, "</h1>\n<ul class=\"facts\">\n");
	for (i = 0; i < d->nfacts; i++) {
		sb_adds(out, "<li><b>");
		esc(out, d->facts[i].key);
		sb_adds(out, "</b>: ");
		esc(out, d->facts[i].value);
		sb_adds(out, "</li>\n");
	}
	sb_adds(out, "</ul>\n");
	if (d->health) {
		sb_printf(out, "<div class=\"banner %s\"><b>Trace health: %s.</b> ", d->verdict,
		    d->verdict);
		esc(out, d->health);
		sb_adds(out, "</div>\n");
	}
	for (i = 0; i < d->nnotes; i++) {
		sb_adds(out, "<p class=\"note\">");
		esc(out, d->notes[i]);
		sb_adds(out, "</p>\n");
	}
	for (i = 0; i < d->nsecs; i++) {
		const struct section *s = &d->secs[i];
		sb_printf(out, "<section data-section=\"%s\">\n<h2>", s->id);
		esc(out, s->title);
		sb_adds(out, "</h2>\n");
		if (s->intro) {
			sb_adds(out, "<p>");
			esc(out, s->intro);
			sb_adds(out, "</p>\n");
		}
		for (j = 0; j < s->ntabs; j++) {
			const struct tab *t = &s->tabs[j];
			if (t->stage && (j == 0 || !s->tabs[j - 1].stage ||
			    strcmp(s->tabs[j - 1].stage, t->stage) != 0)) {
				sb_adds(out, "<h3>");
				esc(out, stage_label(t->stage));
				sb_adds(out, "</h3>\n");
			}
			if (t->headline) {
				sb_adds(out, "<p class=\"headline\">");
				esc(out, t->headline);
				sb_adds(out, "</p>\n");
			}
			if (t->stage && strcmp(t->id, "kernel") == 0) {
				sb_adds(out, "<div class=\"chart\" data-chart=\"stack\" data-run=\"");
				sb_printf(out, "%zu\" data-stage=\"", run);
				esc_html(out, t->stage, 1);
				sb_printf(out, "\"></div>\n<div class=\"chart\" data-chart=\"steps\" "
				    "data-run=\"%zu\" data-stage=\"", run);
				esc_html(out, t->stage, 1);
				sb_printf(out, "\"></div>\n<div class=\"chart\" data-chart=\"top\" "
				    "data-run=\"%zu\" data-stage=\"", run);
				esc_html(out, t->stage, 1);
				sb_adds(out, "\"></div>\n");
			}
			if (t->stage && strcmp(t->id, "roofline") == 0) {
				sb_printf(out, "<div class=\"chart\" data-chart=\"roof\" data-run=\"%zu\" "
				    "data-stage=\"", run);
				esc(out, t->stage);
				sb_adds(out, "\"></div>\n");
			}
			if (t->total) {
				sb_adds(out, "<p>");
				esc(out, t->total);
				sb_adds(out, "</p>\n");
			}
			html_table(out, t);
			if (t->more) {
				sb_adds(out, "<p class=\"more\">");
				esc(out, t->more);
				sb_adds(out, "</p>\n");
			}
		}
		sb_adds(out, "</section>\n");
	}
	sb_adds(out, "</article>\n");
}

/*
 * JSON inside <script>: < > & as \u003c \u003e \u0026, so no "</script",
 * "<!--" or "<script" in a name can end or change the element, and U+2028
 * and U+2029 as \u2028 \u2029 (line ends to older script parsers).  In
 * JSON text those characters occur only inside strings, so this is exact
 * (issue 27 item 8).
 */
static void
script_json(sbuf *out, const sbuf *j)
{
	const unsigned char *p = (const unsigned char *)(j->s ? j->s : "");
	size_t i;

	for (i = 0; i < j->len; i++) {
		if (p[i] == '<')
			sb_adds(out, "\\u003c");
		else if (p[i] == '>')
			sb_adds(out, "\\u003e");
		else if (p[i] == '&')
			sb_adds(out, "\\u0026");
		else if (p[i] == 0xe2 && i + 2 < j->len && p[i + 1] == 0x80 &&
		    (p[i + 2] == 0xa8 || p[i + 2] == 0xa9)) {
			sb_adds(out, p[i + 2] == 0xa8 ? "\\u2028" : "\\u2029");
			i += 2;
		} else
			sb_addc(out, (char)p[i]);
	}
}

void
html_write(const struct doc *const *docs, size_t n, const char *title, sbuf *out)
{
	sbuf data = SBUF_INIT;
	size_t i;

	sb_adds(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	    "<meta name=\"viewport\" content=\"width=device-width\"><title>");
	esc_title(out, title);
	sb_printf(out, "</title>\n<style>%s</style></head>\n<body data-ready=\"0\" "
	    "data-errors=\"0\">\n<script>window.onerror=function(){var b=document.body;"
	    "b.dataset.errors=String(+b.dataset.errors+1);};</script>\n", css);
	if (n > 1) {
		sb_adds(out, "<nav class=\"toc\">");
		for (i = 0; i < n; i++) {
			sb_printf(out, "<a href=\"#run-%zu\">", i + 1);
			esc(out, docs[i]->title);
			sb_adds(out, "</a>");
		}
		sb_adds(out, "</nav>\n");
	}
	sb_adds(out, "<main>\n");
	for (i = 0; i < n; i++)
		html_run(out, docs[i], i);
	if (n != 1 || !doc_is_diff(docs[0]))	/* a diff explains itself in its intros */
		sb_adds(out, "<section data-section=\"legend\"><h2>Legend</h2><p>Share: a kernel's "
	    "GPU time over its stage's total, the sum of its kernel durations (in the overlap "
	    "table: over the stage's GPU busy time, the union of its kernels' intervals). Overlap "
	    "verdicts: headroom, the kernel runs exposed and overlapping could hide it; "
	    "low-roi-hidden, it is already hidden. Priority: P1 act, P2 check dependencies, "
	    "P4/P5 skip. Click a column title to sort.</p></section>\n");
	sb_adds(out, "</main>\n");
	sb_adds(&data, "[");
	for (i = 0; i < n; i++) {
		if (i)
			sb_addc(&data, ',');
		chart_data(&data, docs[i]);
	}
	sb_adds(&data, "]");
	sb_adds(out, "<script type=\"application/json\" id=\"chart-data\">");
	script_json(out, &data);
	sb_printf(out, "</script>\n<script>%s</script>\n</body></html>\n", js);
	sb_free(&data);
}
