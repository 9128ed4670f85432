"""The inline style sheet and script of the HTML report (no external resource of any kind)."""

from __future__ import annotations

import base64
import hashlib

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d232b;background:#f6f7f9}
header,main{max-width:1280px;margin:0 auto;padding:0 20px}
header h1{font-size:22px;margin:18px 0 4px}
h2{font-size:17px;margin:22px 0 8px}h3{font-size:14px;margin:14px 0 6px}
table{border-collapse:collapse;background:#fff;margin:4px 0 10px}
th,td{border:1px solid #dde1e6;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#eef1f4;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.cards{display:flex;flex-wrap:wrap;gap:12px}.cards table{margin:0}
.lvl{display:inline-block;padding:0 7px;border-radius:9px;font-size:12px;font-weight:600}
.lvl-clean{background:#d9f2e0;color:#155d2b}.lvl-partial{background:#d8eef7;color:#0b5470}
.lvl-armed{background:#fbefc7;color:#7a5300}.lvl-trifecta{background:#f9d4d4;color:#8c1616}
.lvl-exfiltration{background:#b3141b;color:#fff}
.act-confirm td.action{background:#fff3cd}.act-deny td.action{background:#f8d7da}
.leg{display:inline-block;padding:0 5px;margin-right:3px;border-radius:4px;font-size:11px;color:#fff}
span.leg-p{background:#7b3fb3}span.leg-u{background:#d46b08}span.leg-x{background:#1f6fd1}
details.session{background:#fff;border:1px solid #dde1e6;border-radius:8px;margin:10px 0;padding:0 12px}
details.session>summary{cursor:pointer;padding:8px 0;font-weight:600;overflow-wrap:anywhere}
.sid{font-family:ui-monospace,monospace;overflow-wrap:anywhere}
.mono,code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px;overflow-wrap:anywhere}
.graphbox{overflow-x:auto;border:1px solid #e3e6ea;border-radius:6px;background:#fcfcfd}
svg.graph text{font:11px system-ui,sans-serif;text-anchor:middle;fill:#1d232b}
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
.ev{width:100%;table-layout:fixed}.ev td.text{white-space:pre-wrap;overflow-wrap:anywhere}
.ev th:nth-child(1){width:12%}.ev th:nth-child(2){width:7%}.ev th:nth-child(3){width:19%}.ev th:nth-child(5){width:10%}
.more{color:#6b7480;font-style:italic}
.pager{margin:6px 0}.pager button{margin-right:6px}
footer{color:#6b7480;font-size:12px;margin:30px auto;max-width:1280px;padding:0 20px}
"""

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
