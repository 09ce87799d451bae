fn a() {
    10
}
fn b() {
    20
}
