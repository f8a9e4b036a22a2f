exec(open('/tmp/tf32x/prog/models.py').read())
import math
C=list(struct.unpack('<%df'%(M*N),open('/tmp/tf32x/device-out/C0.f32','rb').read()))
u=2.0**-24
cv={m:([conv[m](x) for x in A],[conv[m](x) for x in B]) for m in ('rne','rna','trn','f32')}
absdot=[0.0]*(M*N)
for i in range(M):
    a=A[i*K:(i+1)*K]
    for j in range(N):
        b=B[j*K:(j+1)*K]; absdot[i*N+j]=math.fsum(abs(x*y) for x,y in zip(a,b))
bad=[11819,27025,32919,14928,35274,46465]
def model(ma,mb):
    Aa=cv[ma][0]; Bb=cv[mb][1]; out=[0.0]*(M*N)
    for i in range(M):
        a=Aa[i*K:(i+1)*K]
        for j in range(N):
            out[i*N+j]=math.fsum(x*y for x,y in zip(a,Bb[j*K:(j+1)*K]))
    return out
print('residual got-model in units of u*sum|t| (u=2^-24); gamma~_{K+1} prob bound = %.1f u-units, gamma_{K+1} = %d'%(math.expm1(10*math.sqrt(K+1)*u)/u, K+1))
for ma,mb in (('rne','rne'),('rna','rna'),('trn','trn'),('rna','trn'),('trn','rna'),('rne','rna'),('rna','rne'),('f32','f32')):
    mo=model(ma,mb)
    z=sorted(abs(C[e]-mo[e])/(u*absdot[e]) for e in range(M*N) if absdot[e]>0)
    over=sum(1 for e in range(M*N) if absdot[e]>0 and abs(C[e]-mo[e])>math.expm1(10*math.sqrt(K+1)*u)*absdot[e])
    print('%s/%s: median %.3f p99.9 %.3f max %.3f  over gamma~: %d  | failing elems:'%(ma,mb,z[len(z)//2],z[int(len(z)*.999)],z[-1],over),
          ' '.join('%.2f'%(abs(C[e]-mo[e])/(u*absdot[e])) for e in bad))
