#include <stdio.h>
#include <stdlib.h>
#include "kgate/gen.h"
int main(void){kg_gen_spec s[2]={{592335960485313489ull,23533,101,233,99,24,59ull,83ull,5ull,0,0,1.0f,6,{1,2,3,4,5,6,0,0}},{592335960485313489ull,109743,471,233,469,117,95ull,83ull,3ull,1,0,1.0f,6,{1,2,3,4,5,6,0,0}}};
const char*nm[2]={"A.f32","B.f32"};for(int i=0;i<2;i++){float*p=malloc(s[i].n*4+16);kg_gen_all(&s[i],p);FILE*f=fopen(nm[i],"wb");fwrite(p,4,s[i].n,f);fclose(f);}return 0;}
