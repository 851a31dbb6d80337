#!/bin/sh
# The html report in a real browser: scripts/report-shot makes the report of the seeded
# incident (as docs/report-example.html is made) and opens it in headless Chromium with the
# network shut off and a net log kept; then
#   - the page names nothing to fetch: no src, href, srcset, action, poster, data or url()
#     that is not a fragment or data: (in the html and in the DOM Chromium built), no script;
#   - the net log holds no request but Chromium's own housekeeping (its clock, component
#     updates, sign-in, the spelling dictionary): a page's request would be logged there, and
#     it was seen to be (an <img> and a stylesheet on other hosts, added by hand);
#   - the DOM has the queues table, a per-cause table for each of the 11 queues with the 19
#     causes' rows, and the SVG timelines: 12 plots, the incident's bars adding up to 19;
#   - the screenshot is 1400 x 3000 and not blank: many colours, ink on a fair share of it,
#     the plots' bar red (#c0392b) and the status green drawn.
# Skipped (77) without chromium or python3 (scripts/deps installs chromium).
# usage: report_browser.sh SOURCE_ROOT DLQX
set -u
root=$1
dlqx=$2
command -v python3 >/dev/null || { echo "no python3: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$root/scripts/report-shot" --out "$tmp" "$dlqx" >"$tmp/shot.log" 2>&1
rc=$?
[ $rc -eq 77 ] && { cat "$tmp/shot.log"; exit 77; }
if [ $rc -ne 0 ]; then
  echo "FAIL scripts/report-shot (exit $rc):"
  cat "$tmp/shot.log"
  exit 1
fi
python3 - "$tmp" <<'EOF'
import json, re, struct, sys, zlib
from html.parser import HTMLParser

d = sys.argv[1]
fails = []
def check(ok, what):
    if not ok:
        fails.append(what)

# 1. Nothing to fetch, in the page as written and as Chromium built it.
URL_ATTRS = {"src", "href", "srcset", "action", "formaction", "poster", "data", "xlink:href",
             "background", "ping", "manifest", "cite"}
class Refs(HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs, self.scripts, self.tags = [], 0, []
        self.stack, self.text = [], []
    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self.stack.append(tag)
        if tag == "script":
            self.scripts += 1
        for k, v in attrs:
            if k in URL_ATTRS and v is not None:
                self.refs.append((tag, k, v))
            if k == "style" and v:
                self.refs += [(tag, "style", u) for u in re.findall(r"url\(([^)]*)\)", v)]
    def handle_data(self, data):
        if self.stack and self.stack[-1] == "style":
            self.refs += [("style", "url()", u) for u in re.findall(r"url\(([^)]*)\)", data)]
            if "@import" in data:
                self.refs.append(("style", "@import", data))
def refs_of(path):
    p = Refs()
    p.feed(open(path, encoding="utf-8").read())
    return p
for name in ("report.html", "report.dom.html"):
    p = refs_of(f"{d}/{name}")
    bad = [r for r in p.refs if not (r[2].strip("'\" ").startswith(("#", "data:")))]
    check(not bad, f"{name}: fetches {bad[:3]}")
    check(p.scripts == 0, f"{name}: {p.scripts} scripts")

# 2. No request but Chromium's own.
OWN = ("http://clients2.google.com/time/", "https://clients2.google.com/time/",
       "http://update.googleapis.com/service/update2", "https://update.googleapis.com/service/update2",
       "https://accounts.google.com/ListAccounts", "https://redirector.gvt1.com/edgedl/")
for name in ("netlog.dom.json", "netlog.shot.json"):
    text = open(f"{d}/{name}", encoding="utf-8", errors="replace").read()
    check('"constants"' in text, f"{name}: not a net log")
    urls = set(re.findall(r'"url":"([^"]*)"', text))
    foreign = sorted(u for u in urls if not u.startswith(OWN) and not u.startswith("file:"))
    check(not foreign, f"{name}: the page made requests: {foreign[:5]}")

# 3. The DOM: the tables and the plots.
class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.h3 = 0
        self.tables = []   # [header cells, data rows]
        self.svgs = []     # [bar titles]
        self.cell = None
        self.in_title = False
    def handle_starttag(self, tag, attrs):
        if tag == "h3":
            self.h3 += 1
        elif tag == "table":
            self.tables.append([[], 0])
        elif tag == "tr" and self.tables:
            self.tables[-1][1] += 1
        elif tag == "th":
            self.cell = ""
        elif tag == "svg":
            self.svgs.append([])
        elif tag == "title" and self.svgs:
            self.in_title = True
    def handle_endtag(self, tag):
        if tag == "th" and self.tables and self.cell is not None:
            self.tables[-1][0].append(self.cell.strip())
            self.cell = None
        elif tag == "title":
            self.in_title = False
    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data
        elif self.in_title and self.svgs:
            self.svgs[-1].append(data)
dom = Dom()
dom.feed(open(f"{d}/report.dom.html", encoding="utf-8").read())
CAUSE_HEAD = ["Count", "First", "Last", "Rate now", "Status", "Group", "Framework", "Type",
              "Sample id", "Error"]
causes = [t for t in dom.tables if t[0] == CAUSE_HEAD]
queues = [t for t in dom.tables if t[0][:2] == ["Queue", "Dead letters"]]
check(len(queues) == 1 and queues[0][1] == 12, f"the queues table: {queues}")
check(dom.h3 == 11 and len(causes) == 11, f"per-cause tables: {len(causes)} for {dom.h3} queues")
check(sum(t[1] - 1 for t in causes) == 19, f"per-cause rows: {sum(t[1] - 1 for t in causes)}, expected 19")
check(len(dom.svgs) == 12, f"{len(dom.svgs)} SVG plots, expected 12")
bars = [int(x) for x in dom.svgs[0]] if dom.svgs and all(x.isdigit() for x in dom.svgs[0]) else []
check(len(bars) >= 2 and sum(bars) == 19, f"the timeline's bars: {dom.svgs[:1]}, expected 19 in all")

# 4. The screenshot: a PNG, decoded here (zlib and the five filters), not blank.
def png_pixels(path):
    b = open(path, "rb").read()
    if b[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, w = 8, b"", 0
    while pos < len(b):
        n, kind = struct.unpack(">I4s", b[pos:pos + 8])
        data = b[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, inter = struct.unpack(">IIBBBBB", data)
            if depth != 8 or ctype not in (2, 6) or inter:
                raise ValueError(f"unexpected PNG form: depth {depth} type {ctype}")
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += data
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            up = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + up) & 255
            elif f == 3:
                line[i] = (line[i] + (a + up) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(up - c), abs(a - c), abs(a + up - 2 * c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else up if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows
try:
    w, h, bpp, rows = png_pixels(f"{d}/report.png")
    colours, ink = {}, 0
    for r in rows[::2]:
        for x in range(0, w * bpp, 2 * bpp):
            px = r[x:x + 3]
            colours[px] = colours.get(px, 0) + 1
            if px != b"\xff\xff\xff":
                ink += 1
    sampled = sum(colours.values())
    check((w, h) == (1400, 3000), f"the screenshot is {w}x{h}")
    check(len(colours) >= 20, f"the screenshot has {len(colours)} colours")
    check(ink / sampled > 0.05, f"the screenshot is {100 * ink / sampled:.1f}% ink")
    check(colours.get(bytes.fromhex("c0392b"), 0) > 100, "no bar red (#c0392b) in the screenshot")
    green = sum(n for px, n in colours.items() if px[1] > 120 and px[1] > px[0] + 60 and px[1] > px[2] + 30)
    check(green > 20, "no status green in the screenshot")
    print(f"screenshot {w}x{h}: {len(colours)} colours, {100 * ink / sampled:.1f}% ink (sampled)")
except (ValueError, zlib.error, struct.error) as e:
    check(False, f"the screenshot: {e}")

for f in fails:
    print("FAIL", f)
print(f"report_browser: {len(fails)} failed")
sys.exit(1 if fails else 0)
EOF
