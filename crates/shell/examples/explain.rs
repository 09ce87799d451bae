//! Prints what osprey-shell makes of each script given as an argument:
//! `cargo run -p osprey-shell --example explain -- 'ls && r""m -rf x'`.
#![expect(clippy::print_stdout, reason = "an example's output is its purpose")]

use osprey_shell::{
    ParsedCommand, is_dangerous, is_known_safe, parse_script, script_dangerous_reason,
    script_is_known_safe,
};

fn main() {
    for script in std::env::args().skip(1) {
        println!("script: {script:?}");
        let parsed = parse_script(&script);
        match &parsed {
            ParsedCommand::Commands(commands) => {
                for cmd in commands {
                    println!(
                        "  {:?} redirect={} env={:?} dynamic={:?} safe={} dangerous={:?}",
                        cmd.argv,
                        cmd.redirects_to_file,
                        cmd.env,
                        cmd.dynamic_args,
                        is_known_safe(cmd),
                        is_dangerous(cmd)
                    );
                }
            }
            ParsedCommand::NotAnalysable { reason } => println!("  not analysable: {reason}"),
        }
        println!(
            "  script safe={} dangerous={:?}",
            script_is_known_safe(&parsed),
            script_dangerous_reason(&parsed)
        );
    }
}
