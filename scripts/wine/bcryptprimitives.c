/* Wine 8.0 lacks bcryptprimitives.dll, which the Go (>=1.22) runtime needs for
   ProcessPrng. This shim forwards to advapi32's RtlGenRandom (SystemFunction036). */
#include <windows.h>
typedef BOOLEAN (WINAPI *rtlgen)(PVOID, ULONG);
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
  static rtlgen f;
  if (!f) f = (rtlgen)GetProcAddress(LoadLibraryA("advapi32.dll"), "SystemFunction036");
  while (len > 0) {
    ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
    if (!f(data, n)) return FALSE;
    data += n; len -= n;
  }
  return TRUE;
}
