#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cublasLt.h>
#include <cuda_runtime.h>
#include "kgate/gen.h"
cublasLtHandle_t h;void*ws;
void gemm(int M,int N,int K,float*A,float*B,float*C){float*a,*b,*c;cudaMalloc(&a,4l*M*K);cudaMalloc(&b,4l*N*K);cudaMalloc(&c,4l*M*N);
cudaMemcpy(a,A,4l*M*K,cudaMemcpyHostToDevice);cudaMemcpy(b,B,4l*N*K,cudaMemcpyHostToDevice);
cublasLtMatmulDesc_t d;cublasLtMatmulDescCreate(&d,CUBLAS_COMPUTE_32F_FAST_TF32,CUDA_R_32F);int ta=CUBLAS_OP_T,tb=CUBLAS_OP_N;
cublasLtMatmulDescSetAttribute(d,CUBLASLT_MATMUL_DESC_TRANSA,&ta,4);cublasLtMatmulDescSetAttribute(d,CUBLASLT_MATMUL_DESC_TRANSB,&tb,4);
cublasLtMatrixLayout_t la,lb,ld;cublasLtMatrixLayoutCreate(&la,CUDA_R_32F,K,N,K);cublasLtMatrixLayoutCreate(&lb,CUDA_R_32F,K,M,K);cublasLtMatrixLayoutCreate(&ld,CUDA_R_32F,N,M,N);
cublasLtMatmulPreference_t p;cublasLtMatmulPreferenceCreate(&p);size_t w=32<<20;cublasLtMatmulPreferenceSetAttribute(p,CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,&w,8);
cublasLtMatmulHeuristicResult_t r;int g=0;cublasLtMatmulAlgoGetHeuristic(h,d,la,lb,ld,ld,p,1,&r,&g);float al=1,be=0;
int st=cublasLtMatmul(h,d,&al,b,la,a,lb,&be,c,ld,c,ld,&r.algo,ws,w,0);cudaDeviceSynchronize();printf("gemm %d %d %d: heur %d st %d\n",M,N,K,g,st);
cudaMemcpy(C,c,4l*M*N,cudaMemcpyDeviceToHost);cudaFree(a);cudaFree(b);cudaFree(c);}
void put(const char*n,void*p,long s){char f[512];snprintf(f,512,"%s/%s",getenv("OUT"),n);FILE*o=fopen(f,"wb");fwrite(p,1,s,o);fclose(o);}
int main(){cublasLtCreate(&h);cudaMalloc(&ws,32<<20);
kg_gen_spec s[2]={{592335960485313489ull,23533,101,233,99,24,59ull,83ull,5ull,0,0,1.0f,6,{1,2,3,4,5,6,0,0}},{592335960485313489ull,109743,471,233,469,117,95ull,83ull,3ull,1,0,1.0f,6,{1,2,3,4,5,6,0,0}}};
float*A=(float*)malloc(4*23536),*B=(float*)malloc(4*109748),*C=(float*)malloc(4*101*471);kg_gen_all(&s[0],A);kg_gen_all(&s[1],B);
put("A.f32",A,4*23533);for(int i=0;i<3;i++){gemm(101,471,233,A,B,C);char n[16];snprintf(n,16,"C%d.f32",i);put(n,C,4*101*471);}
int R=4096,Q=16;float*X=(float*)malloc(4l*R*Q),*I=(float*)calloc(Q*Q,4),*Y=(float*)malloc(4l*R*Q);unsigned z=12345;
for(int i=0;i<Q;i++)I[i*Q+i]=1;for(long i=0;i<(long)R*Q;i++){z=z*1664525u+1013904223u;unsigned u=z;z=z*1664525u+1013904223u;
unsigned e=(z>>8)%24+115;u=(u&0x807fffffu)|(e<<23);if(i%2==0)u=(u&~0x1fffu)|0x1000u;memcpy(&X[i],&u,4);}
put("X.f32",X,4l*R*Q);gemm(R,Q,Q,X,I,Y);put("YA.f32",Y,4l*R*Q);gemm(Q,R,Q,I,X,Y);put("YB.f32",Y,4l*R*Q);
printf("lt %zu\n",cublasLtGetVersion());return 0;}
