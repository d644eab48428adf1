#!/bin/sh
# gencode.sh ARCHS: CMake's CUDA_ARCHITECTURES list ("80-real;90a-real;90-virtual"; an entry
# without a suffix means both) as nvcc -gencode flags, for the shell to split into words.
set -eu
IFS=';'
for arch in $1; do
  case $arch in
    *-real) n=${arch%-real}; printf ' -gencode arch=compute_%s,code=sm_%s' "$n" "$n" ;;
    *-virtual) n=${arch%-virtual}; printf ' -gencode arch=compute_%s,code=compute_%s' "$n" "$n" ;;
    *) printf ' -gencode arch=compute_%s,code=sm_%s -gencode arch=compute_%s,code=compute_%s' "$arch" "$arch" "$arch" "$arch" ;;
  esac
done
