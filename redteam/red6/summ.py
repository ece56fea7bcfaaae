import json,sys
d=json.load(open(sys.argv[1])); v=d['verdict']
fs=v.get('findings') or []
msg=' | '.join(f"[{f.get('check')}] {str(f.get('message'))[:200]}" for f in fs[:2])
if not fs:
    for c in v.get('correctness') or []:
        for t in c['trials']:
            if not t['passed']:
                fm=' '.join(f"[{x.get('check')}] {str(x.get('message'))[:150]}" for x in t.get('findings') or [])
                msg += f" {c['variant']}/{t['label']} {fm}"
                break
print(f"passed={v['passed']} stage={v['stage_failed']} {msg}")
