use super::*;
use crate::inspect::test_support::{self, call, output, output_text, project};
use osprey_tools::names::{READ_FILE, SHELL_COMMAND};
use pretty_assertions::assert_eq;

fn start(cwd: &Path) -> TurnStart<'_> {
    test_support::start(
        "Create add.py and test_add.py, then run python3 -m unittest.",
        cwd,
    )
}

/// Runs one call named `tool` through the aid with `text` as its result; returns the result
/// the model would read.
fn through(aid: &mut MissingName, tool: &str, text: &str) -> String {
    let arguments = serde_json::json!({"command": "python3 -m unittest", "path": "a"});
    aid.before_tool_calls(&[call("c1", tool, arguments)]);
    let mut outputs = [output("c1", text)];
    aid.after_tool_outputs(&mut outputs);
    output_text(&outputs[0])
}

const TEST_ADD: &str = "import unittest\n\nclass TestAdd(unittest.TestCase):\n    def test_add(self):\n        \
     self.assertEqual(add(1, 2), 3)\n";

fn name_error(dir: &Path, file: &str) -> String {
    format!(
        "Exit code: 1\nOutput:\nE\n======\nERROR: test_add (test_add.TestAdd.test_add)\n\
         Traceback (most recent call last):\n  File \"{}\", line 5, in test_add\n    \
         self.assertEqual(add(1, 2), 3)\n                     ^^^\n\
         NameError: name 'add' is not defined\n\nRan 1 test in 0.000s\n\nFAILED (errors=1)\n",
        real(dir).join(file).display()
    )
}

#[test]
fn a_python_name_another_file_defines_gets_its_file_and_the_import_line() {
    let dir = project(&[
        ("add.py", "def add(a, b):\n    return a + b\n"),
        ("test_add.py", TEST_ADD),
    ]);
    let mut aid = MissingName::new(&start(dir.path()));
    let error = name_error(dir.path(), "test_add.py");
    assert_eq!(
        through(&mut aid, SHELL_COMMAND, &error),
        format!(
            "{error}\n\nNote: `add` is defined in add.py (`def add(a, b):`), not in \
             test_add.py. Import it at the top of test_add.py: `from add import add`. Keep \
             the lines already there: edit_file with old `import unittest` and new \
             `import unittest\\nfrom add import add`."
        )
    );
}

#[test]
fn a_package_module_is_imported_by_its_dotted_path_and_a_relative_frame_is_found() {
    let dir = project(&[
        (
            "shop/tax.py",
            "RATE = 0.2\n\ndef compute_tax(x):\n    return x * RATE\n",
        ),
        ("main.py", "print(compute_tax(10))\n"),
    ]);
    let mut aid = MissingName::new(&start(dir.path()));
    let error = "Traceback (most recent call last):\n  File \"main.py\", line 1, in <module>\n\
                 NameError: name 'compute_tax' is not defined. Did you mean: 'compute'?\n";
    let result = through(&mut aid, SHELL_COMMAND, error);
    assert!(
        result.ends_with(
            "Note: `compute_tax` is defined in shop/tax.py (`def compute_tax(x):`), not in \
             main.py. Import it at the top of main.py: `from shop.tax import compute_tax`. \
             Keep the lines already there: edit_file with old `print(compute_tax(10))` and \
             new `from shop.tax import compute_tax\\nprint(compute_tax(10))`."
        ),
        "{result}"
    );
}

#[test]
fn nothing_is_added_when_no_other_file_defines_it_only_nested_or_outside_the_project() {
    // Only a method of that name, or the same file, or no definition: no note.
    let dir = project(&[
        (
            "calc.py",
            "class Calc:\n    def add(self, a, b):\n        return a + b\n",
        ),
        ("test_add.py", TEST_ADD),
    ]);
    let mut aid = MissingName::new(&start(dir.path()));
    let error = name_error(dir.path(), "test_add.py");
    assert_eq!(through(&mut aid, SHELL_COMMAND, &error), error);

    // A traceback whose frames are all outside the project.
    let elsewhere = "Traceback (most recent call last):\n  File \"/usr/lib/python3/x.py\", \
                     line 1, in <module>\nNameError: name 'add' is not defined\n";
    assert_eq!(through(&mut aid, SHELL_COMMAND, elsewhere), elsewhere);

    // Not a shell result: a file's content that happens to hold the same text.
    let dir = project(&[
        ("add.py", "def add(a, b):\n    return a + b\n"),
        ("test_add.py", TEST_ADD),
    ]);
    let mut aid = MissingName::new(&start(dir.path()));
    let error = name_error(dir.path(), "test_add.py");
    assert_eq!(through(&mut aid, READ_FILE, &error), error);
}

#[test]
fn a_javascript_reference_error_gets_the_require_line_and_the_export_when_missing() {
    let dir = project(&[
        (
            "lib/largest.js",
            "function largest(numbers) {\n  return Math.max(...numbers);\n}\n",
        ),
        ("max.js", "console.log(largest([1, 9, 3]));\n"),
    ]);
    let max_js = real(dir.path()).join("max.js");
    let error = format!(
        "{path}:1\nconsole.log(largest([1, 9, 3]));\n^\n\n\
         ReferenceError: largest is not defined\n    at Object.<anonymous> ({path}:1:1)\n    \
         at Module._compile (node:internal/modules/cjs/loader:1105:14)\n\nNode.js v18.19.0\n",
        path = max_js.display()
    );
    let mut aid = MissingName::new(&start(dir.path()));
    let result = through(&mut aid, SHELL_COMMAND, &error);
    assert!(
        result.ends_with(
            "Note: `largest` is defined in lib/largest.js (`function largest(numbers) {`), not \
             in max.js. Export it at the end of lib/largest.js (`module.exports = { largest };`) \
             and require it at the top of max.js: `const { largest } = require('./lib/largest.js');` \
             Keep the lines already there: edit_file with old `console.log(largest([1, 9, 3]));` \
             and new `const { largest } = require('./lib/largest.js');\\nconsole.log(largest([1, 9, 3]));`."
        ),
        "{result}"
    );

    // Exported already: only the require, with the path from the using file's directory.
    std::fs::write(
        dir.path().join("lib/largest.js"),
        "function largest(numbers) {\n  return Math.max(...numbers);\n}\nmodule.exports = { largest };\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("test")).unwrap();
    std::fs::write(dir.path().join("test/max.test.js"), "largest([1]);\n").unwrap();
    let test_js = real(dir.path()).join("test/max.test.js");
    let error = format!(
        "ReferenceError: largest is not defined\n    at Object.<anonymous> ({}:1:1)\n",
        test_js.display()
    );
    let result = through(&mut aid, SHELL_COMMAND, &error);
    assert!(
        result.ends_with(
            "not in test/max.test.js. Require it at the top of test/max.test.js: \
             `const { largest } = require('../lib/largest.js');` Keep the lines already \
             there: edit_file with old `largest([1]);` and new \
             `const { largest } = require('../lib/largest.js');\\nlargest([1]);`."
        ),
        "{result}"
    );
}

#[test]
fn require_paths_climb_and_descend_between_directories() {
    let cases = [
        ("/p/max.js", "/p/lib.js", "./lib.js"),
        ("/p/test/t.js", "/p/lib.js", "../lib.js"),
        ("/p/a/b/t.js", "/p/c/lib.js", "../../c/lib.js"),
        ("/p/t.js", "/p/src/lib.js", "./src/lib.js"),
    ];
    for (from, target, want) in cases {
        assert_eq!(
            js_require_path(Path::new(from), Path::new(target)).as_deref(),
            Some(want),
            "{from} -> {target}"
        );
    }
}

#[test]
fn a_standard_module_used_without_its_import_gets_the_import_line() {
    let dir = project(&[(
        "pages.py",
        "def pages(items, per_page):\n    return math.ceil(items / per_page)\n",
    )]);
    let mut aid = MissingName::new(&start(dir.path()));
    let error = format!(
        "Traceback (most recent call last):\n  File \"{}\", line 2, in pages\n\
         NameError: name 'math' is not defined\n",
        real(dir.path()).join("pages.py").display()
    );
    let result = through(&mut aid, SHELL_COMMAND, &error);
    assert!(
        result.ends_with(
            "Note: `math` is a module of Python's standard library, and pages.py does not \
             import it. Import it at the top of pages.py: `import math`. Keep the lines \
             already there: edit_file with old `def pages(items, per_page):` and new \
             `import math\\ndef pages(items, per_page):`."
        ),
        "{result}"
    );
    // A name that is neither defined in the project nor a known module: nothing.
    let other = error.replace("'math'", "'total_items'");
    assert_eq!(through(&mut aid, SHELL_COMMAND, &other), other);
}
