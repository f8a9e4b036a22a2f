exec(open('/tmp/tf32x/prog/models.py').read())
import struct
D='/tmp/tf32x/device-out/'
X=list(struct.unpack('<65536f',open(D+'X.f32','rb').read()))
YA=list(struct.unpack('<65536f',open(D+'YA.f32','rb').read()))
YB=list(struct.unpack('<65536f',open(D+'YB.f32','rb').read()))
R,Q=4096,16
# YB is [Q,R]: YB[i*R+r] = conv(X[r*Q+i])
YBt=[YB[(i%Q)*R+i//Q] for i in range(R*Q)]
for nm,Y in (('kgate A (cuBLAS B operand)',YA),('kgate B (cuBLAS A operand)',YBt)):
    for cls,sel in (('ties',lambda i:i%2==0),('non-ties',lambda i:i%2==1)):
        idx=[i for i in range(R*Q) if sel(i)]
        res={m:sum(Y[i]==conv[m](X[i]) for i in idx) for m in ('rne','rna','trn','f32')}
        print('%-28s %-9s n=%d match:'%(nm,cls,len(idx)),res)
