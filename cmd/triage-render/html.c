/*
 * The report as one self-contained HTML file: no network, no external
 * assets.  The tables are written here (short names, the full name on
 * hover), each in a box that scrolls when it is wider than its section; a
 * small script makes them sortable and draws the charts of the document
 * (render.h, struct chart: per stage GPU time by category and idle time,
 * the heaviest kernels, the steps; the ranks; a diff's stages and kernel
 * changes; a bundle's runs; with kernel-roofline's records a log-log roofline
 * of the modeled kernels), as inline SVG with axes, units and legends,
 * from the specs embedded in the page.  The script marks the body data-ready="1" when it
 * ran, counts errors in data-errors and says in data-overflow how many
 * pixels the page is wider than the window, which the tests read back
 * from a headless browser.
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

static const char css[] =
    "body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1b1f24;background:#fff}"
    "main{max-width:1200px;margin:0 auto;padding:16px 24px}"
    "h1{font-size:22px;margin:18px 0 8px}h2{font-size:18px;margin:26px 0 6px;"
    "border-bottom:1px solid #d0d7de;padding-bottom:4px}h3{font-size:15px;margin:18px 0 6px}"
    "section{max-width:100%;overflow-x:auto}"
    "ul.facts{list-style:none;padding:0;margin:0 0 10px}ul.facts li{margin:2px 0}"
    ".banner{padding:8px 12px;border-radius:6px;margin:10px 0}"
    ".banner.ok{background:#dafbe1}.banner.degraded{background:#fff8c5}"
    ".banner.unusable{background:#ffebe9}.note{background:#f6f8fa;padding:6px 10px;"
    "border-left:3px solid #8c959f;margin:6px 0}.headline{font-weight:600}"
    ".tw{max-width:100%;overflow-x:auto}"
    "table{border-collapse:collapse;margin:6px 0 4px;width:100%}"
    "th,td{border:1px solid #d0d7de;padding:3px 6px;vertical-align:top;text-align:left;"
    "overflow-wrap:break-word}"
    "th{background:#f6f8fa;cursor:pointer;user-select:none}"
    "td.n,th.n{text-align:right}td.n{white-space:nowrap}td.w{overflow-wrap:anywhere;"
    "min-width:12em}"
    /* names and sites break anywhere, but not down to a few letters a line */
    "td.k{font-family:ui-monospace,monospace;font-size:12px;overflow-wrap:anywhere;"
    "min-width:18em}"
    ".more{color:#57606a}"
    "figure.chart{margin:10px 0}figure.chart svg{width:100%;height:auto;display:block}"
    ".ctitle{font-size:13px;font-weight:600;margin:2px 0}.legend{font-size:12px}"
    ".legend span{display:inline-block;margin-right:12px}.legend i{display:inline-block;"
    "width:10px;height:10px;margin-right:4px;vertical-align:middle}"
    "nav.toc{background:#f6f8fa;padding:8px 16px}nav.toc a{margin-right:14px;"
    "overflow-wrap:anywhere}h1{overflow-wrap:anywhere}";

/*
 * The page's script: draws every chart from its spec (render.h, struct
 * chart) with an axis of ticks in milliseconds, the axes' labels and a
 * legend; makes the tables sortable; marks the body ready.
 */
static const char js[] =
    "(function(){\n"
    "var body=document.body;\n"
    "var data=JSON.parse(document.getElementById('chart-data').textContent);\n"
    "var NS='http://www.w3.org/2000/svg';\n"
    "var colors={gemm:'#0969da',attention:'#8250df',moe:'#bf3989',communication:'#cf222e',"
    "memcpy:'#bc4c00',memset:'#d4a72c',memory:'#bc4c00',norm:'#1a7f37',elementwise:'#57606a',"
    "activation:'#4ac26b',rope:'#54aeff',softmax:'#a475f9',quantize:'#e16f24',"
    "reduce_topk:'#768390',kv_cache:'#fb8f44',convolution:'#0550ae',idle:'#d0d7de',"
    "base:'#8c959f',cand:'#0969da',slower:'#cf222e',faster:'#1a7f37',cpu:'#0969da',"
    "gpu:'#8250df',busy:'#0969da',comm:'#cf222e',wait:'#d4a72c',extend:'#bc4c00',"
    "decode:'#0969da',all:'#57606a',copy:'#9a6700',indexing:'#116329',"
    "sampling_io:'#6639ba',layout:'#0a3069',embedding:'#8a4600',other:'#6e7781'};\n"
    "var pal=['#6e7781','#953800','#116329','#0a3069','#8a4600','#6639ba'];\n"
    /* a category without a colour of its own: one from its name, the same in every chart */
    "function color(c,i){if(colors[c])return colors[c];if(typeof c!=='string')return pal[i%6];"
    "var h=0;for(var k=0;k<c.length;k++)h=(h*31+c.charCodeAt(k))>>>0;return pal[h%6];}\n"
    "function el(n,a){var e=document.createElementNS(NS,n);for(var k in a)e.setAttribute(k,a[k]);"
    "return e;}\n"
    "function tx(n,a,s){var e=el(n,a);e.textContent=s;return e;}\n"
    "function tip(e,s){var t=el('title',{});t.textContent=s;e.appendChild(t);}\n"
    "function ms(us){var s=(us/1000).toFixed(Math.abs(us)<1000?3:2);"
    "return (us&&+s===0?(us<0?'-':'')+'<0.001':s)+' ms';}\n"
    "function short(s){return s.length>52?s.slice(0,51)+'\\u2026':s;}\n"
    "function fmt(v,st){var d=st>=1?0:Math.min(6,Math.ceil(-Math.log10(st)));"
    "return v.toFixed(d);}\n"
    "function ticks(lo,hi){var raw=(hi-lo)/5,p=Math.pow(10,Math.floor(Math.log10(raw))),"
    "m=raw/p,st=(m<=1?1:m<=2?2:m<=5?5:10)*p,t=[];"
    "for(var v=Math.floor(lo/st)*st;v<hi+st*0.999;v+=st)t.push(Math.abs(v)<st*1e-9?0:v);"
    "return {t:t,st:st};}\n"
    "function cls(sp,j){return Array.isArray(sp.cls)?sp.cls[j]:sp.cls;}\n"
    "function caption(box,sp){var c=document.createElement('div');c.className='ctitle';"
    "c.textContent=sp.title;box.appendChild(c);}\n"
    "function legend(box,sp,tot){var lg=document.createElement('div');lg.className='legend';"
    "(sp.legend||[]).forEach(function(l,i){var s=document.createElement('span');"
    "var w=document.createElement('i');w.style.background=color(l.color,i);s.appendChild(w);"
    "var t=l.name;if(sp.pct&&tot>0){var u=0;sp.rows.forEach(function(r){r.v.forEach("
    "function(v,j){if(sp.names[j]===l.name&&v>0)u+=v;});});t+=' '+(100*u/tot).toFixed(1)+'%';}"
    "s.appendChild(document.createTextNode(t));lg.appendChild(s);});box.appendChild(lg);}\n"
    /* horizontal bars: a row each, its values side by side or stacked; negatives to the left */
    "function hbar(box,sp){var rows=sp.rows,n=rows.length,k=sp.names.length,lo=0,hi=0,tot=0;"
    "if(!n)return;rows.forEach(function(r){var s=0;r.v.forEach(function(v){if(v==null)return;"
    "if(sp.stacked){if(v>0)s+=v;}else{hi=Math.max(hi,v);lo=Math.min(lo,v);}});"
    "if(sp.stacked)hi=Math.max(hi,s);tot+=s;});lo/=1000;hi/=1000;if(!(hi>lo))hi=lo+1;"
    "var tk=ticks(lo,hi);lo=Math.min(lo,tk.t[0]);hi=Math.max(hi,tk.t[tk.t.length-1]);"
    "var W=1000,L=sp.stacked&&n===1?110:340,R=70,pw=W-L-R,bh=sp.stacked||k===1?18:13*k,"
    "rh=bh+8,T=6,B=T+n*rh,H=B+38;"
    "function X(v){return L+pw*(v-lo)/(hi-lo);}"
    "var svg=el('svg',{viewBox:'0 0 '+W+' '+H,role:'img'});"
    "tk.t.forEach(function(t){svg.appendChild(el('line',{x1:X(t),y1:T,x2:X(t),y2:B,"
    "stroke:t===0?'#57606a':'#eaeef2'}));svg.appendChild(tx('text',{x:X(t),y:B+14,"
    "'text-anchor':'middle','font-size':11,'class':'tick'},fmt(t,tk.st)));});"
    "svg.appendChild(el('line',{x1:L,y1:B,x2:W-R,y2:B,stroke:'#57606a'}));"
    "svg.appendChild(tx('text',{x:L+pw/2,y:H-4,'text-anchor':'middle','font-size':12,"
    "'class':'axis'},sp.axis));caption(box,sp);box.appendChild(svg);"
    /* a label wider than its margin is narrowed to fit, never cut at the edge */
    "rows.forEach(function(r,i){var y=T+i*rh+4;var lb=tx('text',{x:L-6,y:y+bh/2+4,"
    "'text-anchor':'end','font-size':11},short(r.label));tip(lb,r.full||r.label);"
    "svg.appendChild(lb);var lw=lb.getComputedTextLength?lb.getComputedTextLength():0;"
    "if(lw>L-10){lb.setAttribute('textLength',L-10);lb.setAttribute('lengthAdjust',"
    "'spacingAndGlyphs');}var x=0;r.v.forEach(function(v,j){if(v==null)return;var a,b,yy,hh;"
    "if(sp.stacked){if(v<0)return;a=X(x/1000);b=X((x+v)/1000);x+=v;yy=y;hh=bh;}"
    "else{a=X(Math.min(0,v/1000));b=X(Math.max(0,v/1000));hh=bh/k;yy=y+j*hh;}"
    "var e=el('rect',{x:a,y:yy,width:Math.max(b-a,0.5),height:Math.max(hh-1,1),"
    "fill:color(r.c?r.c[j]:sp.names[j],j),'class':cls(sp,j),'data-cat':sp.names[j]});"
    "tip(e,(r.full||r.label)+': '+(k>1?sp.names[j]+' ':'')+ms(v)+(sp.stacked&&tot>0?' ('+"
    "(100*v/tot).toFixed(1)+'%)':''));svg.appendChild(e);"
    "if(!sp.stacked)svg.appendChild(tx('text',{x:v<0?a-4:b+4,y:yy+hh/2+4,'font-size':10,"
    "'text-anchor':v<0?'end':'start'},ms(v)));});});"
    "legend(box,sp,tot);}\n"
    /* vertical bars along an x axis (the steps): the values of a row side by side */
    "function vbar(box,sp){var rows=sp.rows,n=rows.length,k=sp.names.length,hi=0;if(!n)return;"
    "rows.forEach(function(r){r.v.forEach(function(v){if(v!=null)hi=Math.max(hi,v);});});"
    "hi/=1000;if(!(hi>0))hi=1;var tk=ticks(0,hi);hi=Math.max(hi,tk.t[tk.t.length-1]);"
    "var W=1000,L=64,R=16,T=8,P=160,B=T+P,H=B+44,pw=W-L-R,slot=pw/n,"
    "gw=Math.min(slot*0.8,36*k),bw=gw/k,every=Math.ceil(n/25);"
    "function Y(v){return B-P*v/hi;}"
    "var svg=el('svg',{viewBox:'0 0 '+W+' '+H,role:'img'});"
    "tk.t.forEach(function(t){svg.appendChild(el('line',{x1:L,y1:Y(t),x2:W-R,y2:Y(t),"
    "stroke:t===0?'#57606a':'#eaeef2'}));svg.appendChild(tx('text',{x:L-6,y:Y(t)+4,"
    "'text-anchor':'end','font-size':11,'class':'tick'},fmt(t,tk.st)));});"
    "svg.appendChild(tx('text',{x:14,y:T+P/2,'text-anchor':'middle','font-size':12,"
    "'class':'axis',transform:'rotate(-90 14 '+(T+P/2)+')'},sp.axis));"
    "svg.appendChild(tx('text',{x:L+pw/2,y:H-4,'text-anchor':'middle','font-size':12,"
    "'class':'xaxis'},sp.xaxis));"
    "rows.forEach(function(r,i){var x0=L+i*slot+(slot-gw)/2;"
    "if(i%every===0)svg.appendChild(tx('text',{x:L+i*slot+slot/2,y:B+14,"
    "'text-anchor':'middle','font-size':11,'class':'xtick'},r.label));"
    "r.v.forEach(function(v,j){if(v==null)return;var e=el('rect',{x:x0+j*bw,y:Y(v/1000),"
    "width:Math.max(bw-1,0.5),height:Math.max(B-Y(v/1000),0.5),"
    "fill:color(r.c?r.c[j]:sp.names[j],j),'class':cls(sp,j)});"
    "tip(e,'step '+r.label+(r.full?' ('+r.full+')':'')+': '+sp.names[j]+' '+ms(v));"
    "svg.appendChild(e);});});caption(box,sp);box.appendChild(svg);legend(box,sp,0);}\n"
    /* the roofline: log-log, FLOP/byte against TFLOP/s, the memory roof and each type's peak */
    "function roof(box,sp){var R=sp;if(!R.pts||!R.pts.length)return;var W=1000,H=360,"
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
    "svg.appendChild(tx('text',{x:(L+W-Rm)/2,y:H-4,'text-anchor':'middle','font-size':12,"
    "'class':'xaxis'},R.xaxis));svg.appendChild(tx('text',{x:12,y:(T+H-B)/2,'font-size':12,"
    "transform:'rotate(-90 12 '+(T+H-B)/2+')','text-anchor':'middle','class':'axis'},R.axis));"
    "peaks.forEach(function(p,i){var xr=1000*p.v/R.bw,x0=Math.pow(10,lx0);"
    "var m=el('polyline',{points:X(x0)+','+Y(R.bw*x0/1000)+' '+X(xr)+','+Y(p.v)+' '+"
    "X(Math.pow(10,lx1))+','+Y(p.v),fill:'none',stroke:color(p.k,i+1),'stroke-width':2,"
    "'class':'roof','data-dtype':p.k});svg.appendChild(m);var lt=el('text',{x:W-Rm+4,"
    "y:Y(p.v)+4,'font-size':'11'});lt.textContent=p.k+' '+p.v+' TFLOP/s';svg.appendChild(lt);});"
    "R.pts.forEach(function(p,i){var c=el('circle',{cx:X(p.x),cy:Y(p.y),r:4+Math.min(6,"
    "Math.sqrt(p.us/1000)),fill:'#0969da','fill-opacity':0.6,'class':'point'});"
    "var tt=el('title',{});tt.textContent=p.name+' '+p.shape+': '+p.y.toFixed(1)+' TFLOP/s at '"
    "+p.x.toFixed(1)+' FLOP/byte, '+ms(p.us)+(p.pct>=0?', '+p.pct.toFixed(0)+'% of roof':'');"
    "c.appendChild(tt);svg.appendChild(c);});caption(box,sp);box.appendChild(svg);"
    "var lg=document.createElement('div');lg.className='legend';lg.textContent='Memory roof '+"
    "R.bw+' GB/s; one point per kernel and shape with FLOPs (memory-only models are not drawn).';"
    "box.appendChild(lg);}\n"
    "document.querySelectorAll('figure.chart').forEach(function(box){"
    "var sp=data[box.dataset.run][box.dataset.chart];if(!sp)return;"
    "if(sp.kind==='vbar')vbar(box,sp);else if(sp.kind==='roof')roof(box,sp);else hbar(box,sp);});\n"
    "document.querySelectorAll('table.sortable').forEach(function(tb){var ths=tb.tHead.rows[0]"
    ".cells;Array.prototype.forEach.call(ths,function(th,ci){th.addEventListener('click',"
    "function(){var num=th.classList.contains('n');var dir=th.dataset.dir==='asc'?-1:1;"
    "th.dataset.dir=dir>0?'asc':'desc';var rows=Array.prototype.slice.call(tb.tBodies[0].rows);"
    "rows.sort(function(a,b){var x=a.cells[ci].dataset.v,y=b.cells[ci].dataset.v;"
    "if(num)return dir*(parseFloat(x)-parseFloat(y));return dir*x.localeCompare(y);});"
    "rows.forEach(function(r){tb.tBodies[0].appendChild(r);});});});});\n"
    /* for the tests: how far the page is wider than the window (0: it fits) */
    "var de=document.documentElement;"
    "body.dataset.overflow=String(Math.max(0,de.scrollWidth-de.clientWidth));\n"
    "body.dataset.ready='1';\n"
    "})();\n";

/* Chart data of one run: its charts' specs, in the order of their figures. */
static void
chart_data(sbuf *out, const struct doc *d)
{
	size_t i;

	sb_addc(out, '[');
	for (i = 0; i < d->ncharts; i++) {
		if (i)
			sb_addc(out, ',');
		sb_adds(out, d->charts[i].spec);
	}
	sb_addc(out, ']');
}

/* The figures of the charts that go before table t of run `run`. */
static void
html_charts(sbuf *out, const struct doc *d, const struct tab *t, size_t run)
{
	size_t i;

	for (i = 0; i < d->ncharts; i++) {
		const struct chart *c = &d->charts[i];
		if (strcmp(c->tab, t->id) != 0 || !c->stage != !t->stage ||
		    (c->stage && strcmp(c->stage, t->stage) != 0))
			continue;
		sb_printf(out, "<figure class=\"chart\" data-run=\"%zu\" data-chart=\"%zu\"></figure>\n",
		    run, i);
	}
}

/*
 * Columns of long text without spaces (paths, names): wrapped anywhere,
 * so that they never push the table past its section; the short ones
 * (CPU ops, categories) keep their words whole.
 */
static int
wide_col(const char *key)
{
	static const char *const w[] = { "location", "python_scope", "current_locations",
	    "candidate_path", "evidence", "name", "detail", "path", "trace", "run", "model", NULL };
	size_t i;

	for (i = 0; w[i]; i++)
		if (strcmp(w[i], key) == 0)
			return 1;
	return 0;
}

/* The hover of a kernel row's GPU time: its launches' duration statistics. */
static void
stats_title(sbuf *out, const struct tab *t, size_t r)
{
	static const char *const k[] = { "mean_us", "min_us", "max_us", "p50_us", "p90_us" };
	static const char *const l[] = { "mean", "min", "max", "p50", "p90" };
	size_t i, n = 0;

	for (i = 0; i < 5; i++) {
		int c = tab_col(t, k[i]);
		const struct cell *x;
		if (c < 0)
			continue;
		x = &t->cells[r * t->ncols + (size_t)c];
		if (!x->has_num)
			continue;
		sb_printf(out, "%s%s %s", n++ ? ", " : " title=\"per launch: ", l[i], x->text);
	}
	if (n)
		sb_addc(out, '"');
}

static void
html_table(sbuf *out, const struct tab *t)
{
	size_t r, c;
	char buf[64];

	if (t->nrows == 0 || rows_shown(t) == 0) {	/* none, or every row folded */
		sb_adds(out, "<p class=\"empty\">");
		esc(out, t->nrows && t->folded ? t->folded : t->empty ? t->empty : "No rows.");
		sb_adds(out, "</p>\n");
		return;
	}
	/* a table wider than its section scrolls inside it */
	sb_printf(out, "<div class=\"tw\"><table class=\"sortable\" data-table=\"%s\"><thead><tr>",
	    t->id);
	for (c = 0; c < t->ncols; c++) {
		if (!col_shown(t, c))
			continue;
		sb_printf(out, "<th%s>", t->cols[c].num ? " class=\"n\"" : "");
		esc(out, t->cols[c].title);
		sb_adds(out, "</th>");
	}
	sb_adds(out, "</tr></thead><tbody>\n");
	for (r = 0; r < t->nrows; r++) {
		if (row_folded(t, r))
			continue;
		sb_adds(out, "<tr>");
		for (c = 0; c < t->ncols; c++) {
			const struct cell *x = &t->cells[r * t->ncols + c];
			const char *cls = t->cols[c].num ? "n" : strcmp(t->cols[c].key, "kernel") == 0 ?
			    "k" : wide_col(t->cols[c].key) ? "w" : NULL;
			if (!col_shown(t, c))
				continue;
			sb_adds(out, "<td");
			if (cls)
				sb_printf(out, " class=\"%s\"", cls);
			if (x->full) {
				sb_adds(out, " title=\"");
				esc_html(out, x->full, 1);
				sb_addc(out, '"');
			} else if (strcmp(t->id, "kernel") == 0 &&
			    strcmp(t->cols[c].key, "total_us") == 0)
				stats_title(out, t, r);
			sb_adds(out, " data-v=\"");
			if (x->has_num)
				sb_adds(out, fig_num(x->num, t->cols[c].key, buf));
			else
				esc_html(out, x->text, 1);
			sb_adds(out, "\">");
			esc(out, x->text);
			sb_adds(out, "</td>");
		}
		sb_adds(out, "</tr>\n");
	}
	sb_adds(out, "</tbody></table></div>\n");
	if (t->folded) {
		sb_adds(out, "<p class=\"more\">");
		esc(out, t->folded);
		sb_adds(out, "</p>\n");
	}
}

/*
 * One run's article, id "run-ID"; its charts' data is set ID of the page
 * (a bundle's summary is 0, the runs 1..n).  prefix goes before the title.
 */
static void
html_run(sbuf *out, const struct doc *d, size_t run, const char *prefix)
{
	size_t i, j;

	sb_printf(out, "<article class=\"run\" id=\"run-%zu\">\n<h1>", run);
	sb_adds(out, prefix);
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
			html_charts(out, d, t, run);
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
html_write(const struct doc *const *docs, size_t n, const struct doc *summary, const char *title,
    sbuf *out)
{
	sbuf data = SBUF_INIT;
	size_t i, k = 0;

	sb_adds(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	    "<meta name=\"viewport\" content=\"width=device-width\"><title>");
	esc_title(out, title);
	sb_printf(out, "</title>\n<style>%s</style></head>\n<body data-ready=\"0\" "
	    "data-errors=\"0\">\n<script>window.onerror=function(){var b=document.body;"
	    "b.dataset.errors=String(+b.dataset.errors+1);};</script>\n", css);
	if (n > 1) {
		sb_adds(out, "<nav class=\"toc\">");
		if (summary)
			sb_adds(out, "<a href=\"#run-0\">Summary</a>");
		for (i = 0; i < n; i++) {
			sb_printf(out, "<a href=\"#run-%zu\">", i + 1);
			esc(out, docs[i]->title);
			sb_adds(out, "</a>");
		}
		sb_adds(out, "</nav>\n");
	}
	sb_adds(out, "<main>\n");
	/* the summary of a bundle is chart data set 0, the runs 1..n, as their ids */
	sb_adds(&data, "[");
	if (summary) {
		html_run(out, summary, 0, "");
		chart_data(&data, summary);
	} else
		sb_adds(&data, "[]");
	for (i = 0; i < n; i++) {
		html_run(out, docs[i], i + 1, "Triage report: ");
		sb_addc(&data, ',');
		chart_data(&data, docs[i]);
		k++;
	}
	if (n != 1 || !doc_is_diff(docs[0]))	/* a diff explains itself in its intros */
		sb_adds(out, "<section data-section=\"legend\"><h2>Legend</h2><p>Share: a kernel's "
	    "GPU time over its stage's total, the sum of its kernel durations (in the overlap "
	    "table: over the stage's GPU busy time, the union of its kernels' intervals). Overlap "
	    "verdicts: headroom, the kernel runs exposed and overlapping could hide it; "
	    "low-roi-hidden, it is already hidden. Priority: P1 act, P2 check dependencies, "
	    "P4/P5 skip. Click a column title to sort; hover a bar, a name or a kernel's GPU "
	    "time for its details.</p></section>\n");
	sb_adds(out, "</main>\n");
	sb_adds(&data, "]");
	sb_adds(out, "<script type=\"application/json\" id=\"chart-data\">");
	script_json(out, &data);
	sb_printf(out, "</script>\n<script>%s</script>\n</body></html>\n", js);
	sb_free(&data);
	(void)k;
}
