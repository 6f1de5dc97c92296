// SPDX-License-Identifier: LGPL-2.1-or-later
// A stand-in for the CUDA driver library (libcuda.so.1, found first through
// LD_LIBRARY_PATH) that reports CUDA 11.0: the CUDA runtime then finds a
// driver older than itself, as on a GPU host whose driver was not updated
// with the toolkit. The gpu_test_fails_with_old_driver test runs a GPU test
// with it, which must fail rather than report itself skipped.

extern "C" int
cuDriverGetVersion(int *version)
{
  *version = 11000;
  return 0; // CUDA_SUCCESS
}

extern "C" int
cuInit(unsigned int)
{
  return 35; // CUDA_ERROR_INSUFFICIENT_DRIVER
}
