exec(open('/tmp/tf32x/prog/models.py').read())
import math
C=list(struct.unpack('<%df'%(M*N),open('/tmp/tf32x/device-out/C0.f32','rb').read()))
u=2.0**-24; e_in=(1+2**-10)**2-1
def gam(n,uu): nu=n*uu; return nu/(1-nu)
def gprob(n,uu): return math.expm1(10*math.sqrt(n)*uu+n*uu*uu/(1-uu))
modes=('rna','rne','trn')
cA={m:[conv[m](x) for x in A] for m in modes+('bf16rne','bf16trn')}
cB={m:[conv[m](x) for x in B] for m in modes+('bf16rne','bf16trn')}
bad=[11819,27025,32919,14928,35274,46465]
res=dict(b4=[],b9=[],bt=[],cub4=[],cub9=[],cubt=[]); neg={}
for i in range(M):
    a=A[i*K:(i+1)*K]
    for j in range(N):
        b=B[j*K:(j+1)*K]; e=i*N+j
        absd=math.fsum(abs(x*y) for x,y in zip(a,b)); l2=math.sqrt(math.fsum((x*y)**2 for x,y in zip(a,b)))
        R=ref[e]
        d={(ma,mb):abs(math.fsum(x*y for x,y in zip(cA[ma][i*K:(i+1)*K],cB[mb][j*K:(j+1)*K]))-R) for ma in cA for mb in cB}
        in4=max(d[(x,y)] for x in ('rna','trn') for y in ('rna','trn'))
        in9=max(d[(x,y)] for x in modes for y in modes)
        # tie slack: per-element either direction on ties
        ties=math.fsum(abs(a[k])*abs(cB['rne'][j*K+k]-cB['rna'][j*K+k])+abs(b[k])*abs(cA['rne'][i*K+k]-cA['rna'][i*K+k]) for k in range(K))
        g=min(gam(K+1,u),gprob(K+1,u)) if abs(R)<=10*l2 else gam(K+1,u)
        rest=g*(1+e_in)*absd+u*abs(R)+gam(K,2.0**-53)*absd+1e-30
        # kgate's default (f32) bound floor
        dflt=(min(gam(K,u)*absd,gprob(K,u)*absd) if abs(R)<=10*l2 else gam(K,u)*absd)+u*abs(R)+gam(K,2.0**-53)*absd+1e-30
        b4=max(in4+rest,dflt); b9=max(in9+rest,dflt); bt=max(in4+ties+rest,dflt)
        res['b4'].append(b4)
        err=abs(C[e]-R)
        for k,bb in (('cub4',b4),('cub9',b9),('cubt',bt)): res[k].append(err/bb)
        for nm in ('bf16rne','bf16trn'):
            for k,bb in (('4',b4),('9',b9),('t',bt)):
                neg.setdefault((nm,k),[]).append(d[(nm,nm)]/bb)
        if e in bad: print('elem %d: in4 %.3g in9 %.3g ties %.3g rest %.3g | err %.3g ratio b4 %.2f b9 %.2f b4+ties %.2f | tf32 tie terms in this dot: %d'%(e,in4,in9,ties,rest,err,err/b4,err/b9,err/bt,
              sum(1 for k in range(K) if a[k]*b[k]!=0 and ((f2u(b[k])&0x1fff)==0x1000 or (f2u(a[k])&0x1fff)==0x1000))))
kb=[abs(res['b4'][e]-bnd[e])/bnd[e] for e in range(M*N)]
print('my b4 vs kgate bound: max rel diff %.2e'%max(kb))
for k in ('cub4','cub9','cubt'):
    z=res[k]; print('cuBLAS tf32 under %s: max ratio %.3f, over %d'%(k,max(z),sum(1 for x in z if x>1)))
for (nm,k),z in sorted(neg.items()):
    zs=sorted(z); print('%s feed (f32 accumulate, exact) under b%s: fail %d of %d, median ratio %.1f, min %.2f'%(nm,k,sum(1 for x in z if x>1),len(z),zs[len(zs)//2],zs[0]))
ta=sum(1 for x in A if x!=0 and (f2u(x)&0x1fff)==0x1000); tb=sum(1 for x in B if x!=0 and (f2u(x)&0x1fff)==0x1000)
print('tie elements: A %d of %d nonzero (%.2e), B %d of %d (%.2e)'%(ta,sum(1 for x in A if x),ta/sum(1 for x in A if x),tb,sum(1 for x in B if x),tb/sum(1 for x in B if x)))
