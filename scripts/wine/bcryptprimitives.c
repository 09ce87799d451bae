/* A stand-in bcryptprimitives.dll for Wine versions that lack it (Debian's Wine 8).
 *
 * Rust's standard library (1.78 and later) imports ProcessPrng from bcryptprimitives.dll
 * for its random numbers (HashMap keys); without the DLL a Rust .exe does not start under
 * such a Wine. This exports ProcessPrng on top of RtlGenRandom (advapi32's
 * SystemFunction036), which Wine has. Built by scripts/wine-exec-server.sh with
 * x86_64-w64-mingw32-gcc -shared and placed beside the .exe. Test use only: a real
 * Windows has the genuine DLL. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
