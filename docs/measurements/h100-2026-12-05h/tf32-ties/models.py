exec(open('/tmp/tf32x/prog/load.py').read())
from fractions import Fraction as F
def rna(x,bits):   # keep `bits` mantissa bits (tf32 10, bf16 7), ties away
    u=f2u(x); drop=23-bits
    if (u&0x7f800000)==0x7f800000: return x
    u=(u+(1<<(drop-1)))&~((1<<drop)-1); return u2f(u)
def rne(x,bits):
    u=f2u(x); drop=23-bits; half=1<<(drop-1); low=u&((1<<drop)-1)
    u&=~((1<<drop)-1)
    if low>half or (low==half and (u>>drop)&1): u+=1<<drop
    return u2f(u)
def trn(x,bits): drop=23-bits; return u2f(f2u(x)&~((1<<drop)-1))
def ident(x,bits=None): return x
import math
def f16(x): return struct.unpack('<e',struct.pack('<e',x))[0]
conv={'rna':lambda x:rna(x,10),'rne':lambda x:rne(x,10),'trn':lambda x:trn(x,10),'f32':ident,
      'bf16rne':lambda x:rne(x,7),'bf16trn':lambda x:trn(x,7),'f16':f16}
def exact(r,c,ca,cb):
    return float(sum(F(ca(A[r*K+k]))*F(cb(B[c*K+k])) for k in range(K)))
def f32acc(r,c,ca,cb):
    s=0.0
    for k in range(K): s=f32(s+f32(ca(A[r*K+k])*cb(B[c*K+k])))  # tf32*tf32 product exact in f32
    return s
def split3(r,c,cv):
    # 3xTF32: a=big+small, big=cv(a), small=cv(a-big); sum big*big + big*small + small*big
    s=F(0)
    for k in range(K):
        a=A[r*K+k]; b=B[c*K+k]
        ab=cv(a); bb=cv(b); as_=cv(f32(a-ab)); bs=cv(f32(b-bb))
        s+=F(ab)*F(bb)+F(ab)*F(bs)+F(as_)*F(bb)
    return float(s)
