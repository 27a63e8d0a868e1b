# Creates N idle daily-cron shell tasks on the node at 127.0.0.1:PORT (4 connections).
# Usage: make_tasks.py PORT N
import http.client, json, sys, threading
port=int(sys.argv[1]); n=int(sys.argv[2]); threads=4
def work(k):
    c=http.client.HTTPConnection("127.0.0.1",port)
    for i in range(k, n, threads):
        body=json.dumps({"name":"daily-%d"%i,"command":"true","schedule":"%d %d * * *"%(i%60,(i//60)%24)})
        c.request("POST","/api/v1/tasks",body,{"Content-Type":"application/json"})
        r=c.getresponse(); r.read()
        if r.status!=201: print("status",r.status); return
ts=[threading.Thread(target=work,args=(k,)) for k in range(threads)]
[t.start() for t in ts]; [t.join() for t in ts]
