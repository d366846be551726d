import socket,time,sys,json,random
PORT=18921
tok=sys.argv[1]; n=int(sys.argv[2]); hold=float(sys.argv[3])
socks=[]
for i in range(n):
    s=socket.socket(); s.bind(("127.0.0.1",0)); s.connect(("127.0.0.1",PORT))
    L=16000000
    s.sendall(("POST /attention/dot HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"%(tok,L)).encode())
    s.sendall(b"["*1+b" "*(L-100))
    socks.append(s)
time.sleep(hold)
