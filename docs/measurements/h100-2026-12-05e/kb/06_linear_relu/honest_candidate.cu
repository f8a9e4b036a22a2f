/* honest_candidate.cu: the device code of 06_linear_relu_honest.py, read by `kgate import kernelbench` (its host functions and
 * torch's headers left out, each __global__ made extern "C"; sha256 of the candidate 2780b3c174f994ae) */
#line 5 "06_linear_relu_honest.py"




// One thread per output: relu(sum_k x[b, k] W[o, k] + bias[o]), float32 accumulation.
extern "C" __global__ void linear_relu_kernel(const float* __restrict__ x, const float* __restrict__ W,
                                   const float* __restrict__ bias, float* __restrict__ y,
                                   int batch, int in_f, int out_f) {
    const int o = blockIdx.x * blockDim.x + threadIdx.x;
    const int b = blockIdx.y * blockDim.y + threadIdx.y;
    if (b >= batch || o >= out_f) return;
    const float* xr = x + (long long)b * in_f;
    const float* wr = W + (long long)o * in_f;
    float acc = 0.0f;
    for (int k = 0; k < in_f; k++) acc += xr[k] * wr[k];
    y[(long long)b * out_f + o] = fmaxf(acc + bias[o], 0.0f);
}

                                                                                           
                                
                               
                                     
                                                       
                       
                                                    
                                                                                                              
                                                                                 
             
 
