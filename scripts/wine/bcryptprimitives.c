/* A stand-in bcryptprimitives.dll for running Go (>= 1.22) Windows binaries under Wine 8.0
   (scripts/wine-test.sh builds it into the Wine prefix; it is never shipped).

   1. Wine 8.0 lacks bcryptprimitives.dll, whose ProcessPrng the Go runtime loads at start.
      ProcessPrng here forwards to advapi32's RtlGenRandom (SystemFunction036).

   2. Go 1.26's os.RemoveAll (and so every t.TempDir cleanup) deletes through
      NtSetInformationFile(FileDispositionInformationEx) with POSIX semantics, which real
      Windows has since 10 1607. Wine 8.0 answers it with a status Go does not fall back on
      ("unlinkat ...: Invalid function."). Go falls back to the old FileDispositionInformation
      on STATUS_NOT_SUPPORTED, so when this DLL loads (the Go runtime loads it before main) it
      hooks ntdll's NtSetInformationFile and turns Wine's "not implemented" for that one
      information class into STATUS_NOT_SUPPORTED. Everything else goes to Wine unchanged.
      The hook is installed only when the function is Wine 8's position-independent syscall
      thunk (checked byte by byte); otherwise nothing is patched. */
#include <windows.h>
#include <string.h>

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

#define FILE_DISPOSITION_INFORMATION_EX_CLASS 64
#define ST_NOT_IMPLEMENTED ((LONG)0xC0000002)
#define ST_INVALID_DEVICE_REQUEST ((LONG)0xC0000010)
#define ST_NOT_SUPPORTED ((LONG)0xC00000BB)
#define THUNK_LEN 32

typedef LONG (WINAPI *ntsetinfo)(HANDLE, PVOID, PVOID, ULONG, ULONG);
static ntsetinfo wine_ntsetinfo; /* a copy of Wine's original thunk */

static LONG WINAPI hooked_ntsetinfo(HANDLE h, PVOID iosb, PVOID info, ULONG len, ULONG cls) {
  LONG st = wine_ntsetinfo(h, iosb, info, len, cls);
  if (cls == FILE_DISPOSITION_INFORMATION_EX_CLASS &&
      (st == ST_NOT_IMPLEMENTED || st == ST_INVALID_DEVICE_REQUEST))
    return ST_NOT_SUPPORTED;
  return st;
}

/* Wine 8.0 x86_64 ntdll syscall thunk:
     4c 8b d1               mov %rcx,%r10
     b8 NN NN 00 00         mov $N,%eax
     f6 04 25 08 03 fe 7f 01 testb $1,0x7ffe0308
     75 03 0f 05 c3 eb 01 c3 jne/syscall/ret/jmp/ret
     ff 14 25 00 10 fe 7f c3 call *0x7ffe1000; ret
   It addresses nothing relative to itself, so a copy runs the same. */
static void hook_ntsetinfo(void) {
  static const unsigned char head[] = {0x4c, 0x8b, 0xd1, 0xb8};
  static const unsigned char rest[] = {0xf6, 0x04, 0x25, 0x08, 0x03, 0xfe, 0x7f, 0x01,
                                       0x75, 0x03, 0x0f, 0x05, 0xc3, 0xeb, 0x01, 0xc3,
                                       0xff, 0x14, 0x25, 0x00, 0x10, 0xfe, 0x7f, 0xc3};
  unsigned char *fn = (unsigned char *)GetProcAddress(GetModuleHandleA("ntdll.dll"), "NtSetInformationFile");
  unsigned char *copy;
  DWORD old;
  if (!fn || memcmp(fn, head, sizeof head) || memcmp(fn + 8, rest, sizeof rest)) return;
  copy = VirtualAlloc(NULL, THUNK_LEN, MEM_COMMIT | MEM_RESERVE, PAGE_EXECUTE_READWRITE);
  if (!copy) return;
  memcpy(copy, fn, THUNK_LEN);
  wine_ntsetinfo = (ntsetinfo)copy;
  if (!VirtualProtect(fn, 12, PAGE_EXECUTE_READWRITE, &old)) return;
  fn[0] = 0x48; fn[1] = 0xb8; /* movabs $hooked_ntsetinfo,%rax */
  *(void **)(fn + 2) = (void *)hooked_ntsetinfo;
  fn[10] = 0xff; fn[11] = 0xe0; /* jmp *%rax */
  VirtualProtect(fn, 12, old, &old);
  FlushInstructionCache(GetCurrentProcess(), fn, 12);
}

BOOL WINAPI DllMain(HINSTANCE inst, DWORD reason, LPVOID reserved) {
  (void)inst; (void)reserved;
  if (reason == DLL_PROCESS_ATTACH) hook_ntsetinfo();
  return TRUE;
}
