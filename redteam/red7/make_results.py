import json, os
from meta import M
rows = []
rc = {}
for line in open('rcs.txt'):
    p = line.split()
    rc[p[0]] = p[2].split('=')[1]
def verdict(n):
    try:
        d = json.load(open(n + '.json'))['verdict']
    except Exception as e:
        err = open(n + '.err').read().strip().splitlines() if os.path.exists(n + '.err') else []
        return None, ('no JSON: ' + err[-1][:200]) if err else 'running / not run'
    fs = d.get('findings') or []
    msg = '; '.join(('[' + f.get('check', '') + '] ' + f.get('message', ''))[:260] for f in fs[:1])
    return d, ('PASSED' if d['passed'] else 'stage `%s`: %s' % (d.get('stage_failed'), msg)).replace('|', '/')
out = ['| file | target | class | idea | expected | novelty | exit | verdict (stage: finding) | verifier right? | proof |', '|---|---|---|---|---|---|---|---|---|---|']
tot = {'new': [0, 0], 'known': [0, 0], 'honest': [0, 0]}
passing = []
for n, (tgt, cls, idea, exp, nov) in M.items():
    code = rc.get(n, 'n/a')
    d, vl = verdict(n)
    honest = exp.startswith('honest')
    buggy = exp == 'honest*'
    if code == 'n/a':
        right = 'not run'
    elif buggy:
        right = 'RIGHT (my kernel is wrong at unaligned K; excluded from totals)' if code != '0' else 'passed'
    elif honest:
        right = 'RIGHT' if code == '0' else 'WRONG (honest rejected)'
    else:
        right = 'WRONG (cheat passed)' if code == '0' else 'RIGHT'
    proof = ('proof_%s.txt' % n) if os.path.exists('proof_%s.txt' % n) else ''
    if proof:
        txt = open(proof).read().strip().splitlines()
        proof += ': ' + ' / '.join(l for l in txt if ':' in l)[-300:].replace('|', '/')
    out.append(f'| {n}.py | {tgt} | {cls} | {idea} | {exp} | {nov} | {code} | {vl} | {right} | {proof} |')
    if code == 'n/a' or buggy:
        continue
    key = 'honest' if honest else ('new' if nov == 'new' else 'known')
    tot[key][1] += 1
    if honest and code != '0':
        tot[key][0] += 1
    if not honest and code == '0':
        tot[key][0] += 1
        passing.append(n)
open('table.md', 'w').write('\n'.join(out) + '\n')
print(tot); print(passing)
