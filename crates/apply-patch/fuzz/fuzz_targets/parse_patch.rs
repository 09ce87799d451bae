//! Fuzzes the patch parsers and the invocation recogniser: no input may
//! panic, and whatever the strict parser accepts the lenient one accepts
//! with the same operations.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let lenient = osprey_apply_patch::parse_patch(text);
    if let Ok(strict) = osprey_apply_patch::parse_patch_strict(text) {
        let lenient = lenient.as_ref().map(|p| &p.operations);
        assert_eq!(lenient, Ok(&strict.operations));
    }
    let argv = vec!["apply_patch".to_string(), text.to_string()];
    let _ = osprey_apply_patch::maybe_parse_apply_patch_invocation(&argv);
    let argv = vec!["bash".to_string(), "-lc".to_string(), text.to_string()];
    let _ = osprey_apply_patch::maybe_parse_apply_patch_invocation(&argv);
});
