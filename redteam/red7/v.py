import json,sys
for f in sys.argv[1:]:
    try:
        d=json.load(open(f))['verdict']
    except Exception as e:
        print(f, 'ERR', e); continue
    fs=d.get('findings') or []
    print(f, 'passed=',d['passed'], 'stage=',d.get('stage_failed'), '|', ' || '.join(('['+x.get('check','')+'] '+x.get('message',''))[:300] for x in fs[:2]))
