import json, re, os, ast
rows = {}
for line in open("log.txt"):
    m = re.match(r"(\S+) (\S+) rc=(\d+)", line.strip())
    if m:
        rows[m.group(1)] = (m.group(2), int(m.group(3)))
out = []
for f, (prob, rc) in sorted(rows.items()):
    try:
        doc = ast.get_docstring(ast.parse(open(f).read())) or ""
    except Exception:
        doc = ""
    doc = " ".join(doc.split())[:230]
    msg = ""
    if rc != 0:
        try:
            v = json.load(open(f[:-3] + ".json"))["verdict"]
            fs = v.get("findings") or []
            if not fs:
                for c in v.get("correctness") or []:
                    for t in c.get("trials", []):
                        fs += t.get("findings", [])
            msg = (v.get("stage_failed") or "") + ": " + " | ".join(x.get("check", "") + ": " + x.get("message", "")[:300] for x in fs[:2])
        except Exception as e:
            msg = "no json: " + open(f[:-3] + ".err").read()[-300:].replace("\n", " ")
    out.append((f, prob, rc, doc, msg))
for r in out:
    print(json.dumps(r))
