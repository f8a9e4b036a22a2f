import struct
D='/tmp/tf32x/data/'
M,N,K=map(int,open(D+'shape.txt').read().split())
def rd(name,fmt):
    b=open(D+name,'rb').read(); n=len(b)//struct.calcsize(fmt); return list(struct.unpack('<%d%s'%(n,fmt),b))
A=rd('A.f32','f'); B=rd('B.f32','f'); ref=rd('ref.f64','d'); bnd=rd('bound_tf32.f64','d')
def f2u(x): return struct.unpack('<I',struct.pack('<f',x))[0]
def u2f(u): return struct.unpack('<f',struct.pack('<I',u&0xffffffff))[0]
def f32(x): return struct.unpack('<f',struct.pack('<f',x))[0]
