"""The inline style sheet and script of the HTML report (no external resource of any kind)."""

from __future__ import annotations

import base64
import hashlib

from monitor.report._html_graph import GRAPH_STYLE

# Every text wraps anywhere rather than widen the page (long ids, URLs, arguments): the page reflows down to a
# narrow window and never scrolls sideways; badges and numbers stay whole.
STYLE = (
    """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d232b;background:#f6f7f9;
overflow-wrap:anywhere}
header,main{max-width:1280px;margin:0 auto;padding:0 20px}
header h1{font-size:22px;margin:18px 0 4px}
h2{font-size:17px;margin:22px 0 8px}h3{font-size:14px;margin:14px 0 6px}
table{border-collapse:collapse;background:#fff;margin:4px 0 10px;max-width:100%}
th,td{border:1px solid #dde1e6;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#eef1f4;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.cards{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}.cards table{margin:0}
.lvl,.sev{display:inline-block;padding:0 7px;border-radius:9px;font-size:12px;font-weight:600;white-space:nowrap}
th,td.kind,td.severity,td.num,td.action,.lvl,.leg,.sev,span.action{overflow-wrap:normal}
#index td:nth-child(2),.timeline td:nth-child(4){white-space:nowrap}
.lvl-clean{background:#d9f2e0;color:#155d2b}.lvl-partial{background:#d8eef7;color:#0b5470}.sev-info{background:#e4e8ee}
.lvl-armed,.sev-warning{background:#fbefc7;color:#7a5300}.lvl-trifecta,.sev-high{background:#f9d4d4;color:#8c1616}
.lvl-exfiltration,.sev-critical{background:#b3141b;color:#fff}
.act-confirm td.action{background:#fff3cd}.act-deny td.action{background:#f8d7da}
.leg{display:inline-block;padding:0 5px;margin-right:3px;border-radius:4px;font-size:11px;color:#fff}
span.leg-p{background:#7b3fb3}span.leg-u{background:#d46b08}span.leg-x{background:#1f6fd1}
details.session{background:#fff;border:1px solid #dde1e6;border-radius:8px;margin:10px 0;padding:0 12px}
details.session>summary{cursor:pointer;padding:8px 0;font-weight:600}
.sid{font-family:ui-monospace,monospace}
.mono,code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px}
.graphbox{overflow-x:auto;max-width:100%;border:1px solid #e3e6ea;border-radius:6px;background:#fcfcfd}
svg.graph text{font:10.5px system-ui,sans-serif;text-anchor:middle;fill:#1d232b}
svg.graph .elabel{font-size:10px;fill:#555}
svg.graph .node rect{fill:#fff;stroke:#8b96a3;stroke-width:1.2}
svg.graph .node.tool rect{fill:#f1f3f6}svg.graph .node.server rect{fill:#e4e8ee}
svg.graph .node.leg-p rect{fill:#7b3fb3;stroke:#7b3fb3}svg.graph .node.leg-u rect{fill:#d46b08;stroke:#d46b08}
svg.graph .node.leg-x rect{fill:#1f6fd1;stroke:#1f6fd1}svg.graph .node.leg text{fill:#fff;font-weight:600}
svg.graph .act-confirm rect{fill:#fff3cd}svg.graph .act-deny rect{fill:#f8d7da}
svg.graph .node.path rect{stroke:#c40000;stroke-width:3}
svg.graph line,svg.graph path{stroke:#aab2bd;stroke-width:1.2;fill:none}
svg.graph line.provides{stroke-dasharray:4 3;stroke-width:1.6}
svg.graph line.leg-p{stroke:#7b3fb3}svg.graph line.leg-u{stroke:#d46b08}svg.graph line.leg-x{stroke:#1f6fd1}
svg.graph path.flow{stroke:#555;stroke-width:1.4}
svg.graph path.path{stroke:#c40000;stroke-width:3}svg.graph path.implied{stroke-dasharray:6 4}
svg.graph .arrowhead{fill:#555;stroke:none}
mark{background:#ffe066;color:inherit;padding:0 1px;border-radius:2px}
.ev{width:100%;table-layout:fixed}.ev td.text{white-space:pre-wrap}
.ev col.c-call{width:14%}.ev col.c-kind{width:8%}.ev col.c-ev{width:19%}.ev col.c-from{width:13%}
.ev tr.ghead td{background:#f3f5f8}.ev td.grest{padding:0}
.ev td.grest summary{cursor:pointer;padding:3px 8px;color:#1f5fa8}
.ev .ev{margin:0;border-style:hidden}.count{font-weight:600;color:#8c1616}
.decision{border-left:4px solid #e0b000;padding:2px 10px;margin:6px 0}.decision.act-deny{border-left-color:#c0282f}
.decision p{margin:3px 0}.decision ul{margin:2px 0 6px;padding-left:20px}.decision .action{font-weight:600}
@media (max-width:900px){
.ev,.ev>tbody{display:block}.ev>thead,.ev>colgroup{display:none}
.ev tr{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);grid-template-areas:"call kind" "ev ev"
"from from" "args res";border-bottom:2px solid #dde1e6}
.ev td{display:block;border-width:0 0 1px}.ev td:nth-child(1){grid-area:call}.ev td:nth-child(2){grid-area:kind}
.ev td:nth-child(3){grid-area:ev}.ev td:nth-child(4){grid-area:args}.ev td:nth-child(5){grid-area:from}
.ev td:nth-child(6){grid-area:res}.ev tr.grest>td{grid-area:auto;grid-column:1/-1}.ev td:empty{display:none}
.ev td:nth-child(4)::before,.ev td:nth-child(5)::before,.ev td:nth-child(6)::before{display:block;
font:italic 12px system-ui,sans-serif;color:#6b7480}
.ev td:nth-child(4)::before{content:"in the arguments"}.ev td:nth-child(5)::before{content:"from"}
.ev td:nth-child(6)::before{content:"in its result"}
}
.more{color:#6b7480;font-style:italic}
.pager{margin:6px 0}.pager button{margin-right:6px}
footer{color:#6b7480;font-size:12px;margin:30px auto;max-width:1280px;padding:0 20px}
"""
    + GRAPH_STYLE
)

SCRIPT = """
(function(){
  var size=100;
  document.querySelectorAll('table[data-paged]').forEach(function(table){
    var rows=Array.prototype.slice.call(table.tBodies[0].rows);
    if(rows.length<=size){return;}
    var page=0,pages=Math.ceil(rows.length/size);
    var bar=document.createElement('div');bar.className='pager';
    var prev=document.createElement('button');prev.textContent='previous';
    var next=document.createElement('button');next.textContent='next';
    var label=document.createElement('span');
    bar.appendChild(prev);bar.appendChild(next);bar.appendChild(label);
    table.parentNode.insertBefore(bar,table);
    function show(){
      rows.forEach(function(r,i){r.hidden=Math.floor(i/size)!==page;});
      label.textContent='page '+(page+1)+' of '+pages;
      prev.disabled=page===0;next.disabled=page===pages-1;
    }
    prev.addEventListener('click',function(){page--;show();});
    next.addEventListener('click',function(){page++;show();});
    show();
  });
  document.querySelectorAll('a[data-open]').forEach(function(a){
    a.addEventListener('click',function(){
      var target=document.getElementById(a.getAttribute('href').slice(1));
      if(target&&target.tagName==='DETAILS'){target.open=true;}
    });
  });
})();
"""


def hash_source(text: str) -> str:
    """Return the CSP source expression (``'sha256-…'``) of an inline style or script."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; style-src {hash_source(STYLE)}; script-src {hash_source(SCRIPT)}; img-src 'none'"
)
"""Only the report's own style sheet and script run; nothing is fetched, even if the page were tampered with."""
