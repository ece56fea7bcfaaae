import json, os, re, collections
from meta import META

rc = {}
for line in open('/work/red6/log.txt'):
    m = re.match(r'(\S+)\.py ex=\S+ rc=(\d+)', line)
    if m:
        rc[m.group(1)] = int(m.group(2))  # last run wins

DEMO = {}
if os.path.exists('/work/red6/demo_notes.json'):
    DEMO = json.load(open('/work/red6/demo_notes.json'))


def verdict(name):
    for d in ('a', 'h'):
        p = f'/work/red6/{d}/{name}.json'
        if os.path.exists(p) and os.path.getsize(p) > 0:
            try:
                v = json.load(open(p))['verdict']
            except Exception as e:
                return None, f'unreadable json ({e})'
            if v['passed']:
                return v, 'PASSED'
            fs = v.get('findings') or []
            msg = ''
            if fs:
                f = fs[0]
                msg = f"[{f.get('check')}] {str(f.get('message'))[:220]}"
            else:
                for c in v.get('correctness') or []:
                    for t in c['trials']:
                        if not t['passed']:
                            tf = t.get('findings') or []
                            cm = [x for x in t.get('comparisons') or [] if not x['passed']]
                            msg = f"{c['variant']}/{t['label']}: " + (' '.join(f"[{x.get('check')}] {str(x.get('message'))[:180]}" for x in tf[:1]) or (f"output mismatch max_abs_err={cm[0]['max_abs_err']:.3g} {cm[0].get('note','')}" if cm else ''))
                            break
                    if msg:
                        break
            return v, f"stage={v.get('stage_failed')} {msg}".replace('|', '/').replace('\n', ' ')
        p2 = f'/work/red6/{d}/{name}.err'
    return None, 'not run'


rows = []
tot = collections.Counter()
per_class = collections.defaultdict(lambda: [0, 0])
for name, (ex, cls, idea, exp) in META.items():
    v, line = verdict(name)
    code = rc.get(name, '-')
    if v is None and code == '-':
        continue
    if exp == 'cheat':
        right = code != 0
        tot['attacks'] += 1
        tot['attacks_passed'] += (code == 0)
        per_class[cls][0] += 1
        per_class[cls][1] += (code == 0)
    else:
        right = code == 0
        if 'my bug' not in cls:
            tot['honest'] += 1
            tot['honest_rejected'] += (code != 0)
    verdict_ok = ('n/a (my kernel bug)' if 'my bug' in cls else ('RIGHT' if right else 'WRONG'))
    rows.append((name, ex, cls, idea, exp, code, line, verdict_ok, DEMO.get(name, '')))

with open('/work/red6/results_table.md', 'w') as f:
    f.write('| file | target | class | idea | expected | exit | verdict (stage, finding) | verifier | demonstration |\n')
    f.write('|---|---|---|---|---|---|---|---|---|\n')
    for r in rows:
        f.write('| ' + ' | '.join(str(x).replace('|', '/') for x in r) + ' |\n')
    f.write(f"\n**Totals:** attacks passing (exit 0): {tot['attacks_passed']} / {tot['attacks']}; "
            f"honest rejected: {tot['honest_rejected']} / {tot['honest']}\n\n")
    f.write('| class | attacks | passed (verifier wrong) |\n|---|---|---|\n')
    for cls, (n, p) in sorted(per_class.items()):
        f.write(f'| {cls} | {n} | {p} |\n')
print(open('/work/red6/results_table.md').read()[-3000:])
