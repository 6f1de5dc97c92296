int
main()
{}
