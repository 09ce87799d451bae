fn a() {
    1
}
fn b() {
    2
}
